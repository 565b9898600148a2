/* A program for the symbols tests: it prints the addresses of its functions
   (and of a shared library's, when built with -DWITH_LIB), then waits until
   its stdin closes, so the test can read its /proc/PID/maps. */
#include <stdio.h>
#include <unistd.h>

#ifdef WITH_LIB
extern int lib_fn(int);
#endif

static int __attribute__((noinline)) hidden_fn(int x) { return x * 3 + 1; }

int __attribute__((noinline)) exported_fn(int x) { return hidden_fn(x) + 2; }

int main(void) {
	printf("exported_fn %p\n", (void *)exported_fn);
	printf("hidden_fn %p\n", (void *)hidden_fn);
#ifdef WITH_LIB
	printf("lib_fn %p\n", (void *)lib_fn);
#endif
	printf("main %p\n", (void *)main);
	fflush(stdout);
	char b[1];
	while (read(0, b, 1) > 0) {
	}
	return exported_fn(1) == 0;
}
