x = "été"  # café
