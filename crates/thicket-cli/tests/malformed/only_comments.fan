# a spec with
# nothing but comments

   # and blank lines
