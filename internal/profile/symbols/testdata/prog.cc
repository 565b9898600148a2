// A C++ program for the symbols tests: its names are mangled.
#include <cstdio>
#include <unistd.h>

namespace ns {
struct Klass {
	static int __attribute__((noinline)) method(int x, double y);
};
int Klass::method(int x, double y) { return x + static_cast<int>(y); }

template <typename T> T __attribute__((noinline)) twice(T x) { return x + x; }
template int twice<int>(int);
}  // namespace ns

int main() {
	std::printf("ns::Klass::method %p\n", (void *)&ns::Klass::method);
	std::printf("ns::twice<int> %p\n", (void *)&ns::twice<int>);
	std::printf("main %p\n", (void *)&main);
	std::fflush(stdout);
	char b[1];
	while (read(0, b, 1) > 0) {
	}
	return ns::Klass::method(1, 2.0) + ns::twice(3) == 0;
}
