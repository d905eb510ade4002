// watchdog.hpp - the end of a hung example (examples/fiber/pool.cpp, notify.cpp): parked
// fibers cannot be joined, so a thread ends the program 1.5 s on ("forever" to the report).
#ifndef EXAMPLES_FIBER_WATCHDOG_HPP
#define EXAMPLES_FIBER_WATCHDOG_HPP

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

// In 1.5 s, print what says() returns (a line) and leave at once, exit code 0.
template <class Say> void watchdog(Say says) {
  std::thread([says] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    std::puts(says().c_str());
    std::fflush(stdout);
    std::_Exit(0);
  }).detach();
}

#endif // EXAMPLES_FIBER_WATCHDOG_HPP
