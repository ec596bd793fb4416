"""Capture (docs/bundle.md, docs/inputs.md): a problem file into a bundle. capture.py runs nn.Module
problems through torch.compile and is the command line (`python -m kernelopt.worker.capture`, through
__main__.py); capture_triton.py and capture_helion.py capture kernel files (kernel_files.py loads them,
synthesize.py writes their module); capture_common.py is what every path shares."""
