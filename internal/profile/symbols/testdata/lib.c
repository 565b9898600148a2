/* The shared library of the symbols tests. */
int __attribute__((noinline)) lib_fn(int x) { return x * 7; }
