def f(a,
      b):
	return a  # no final newline