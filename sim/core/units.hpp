// Units: bytes are integers, time is seconds (double), bandwidth is bytes per second inside.
// Inputs say gbps (1e9 bits/s, network line rate) or GBps (1e9 bytes/s) explicitly.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace zerosim {

constexpr double kGbpsToBps = 1e9 / 8.0;  // line rate in Gbit/s -> bytes/s
constexpr double kGBpsToBps = 1e9;        // GB/s -> bytes/s
constexpr std::uint64_t kKiB = 1024, kMiB = kKiB * 1024, kGiB = kMiB * 1024;

inline double gbps_to_Bps(double gbps) { return gbps * kGbpsToBps; }
inline double GBps_to_Bps(double GBps) { return GBps * kGBpsToBps; }

// Parses "1GiB", "512MiB", "4096", "8K" (K/M/G are binary, as nccl-tests reads them), "1GB"
// (decimal). Throws InputError naming `what` (a flag or JSON path) on anything else, on zero or on
// overflow.
std::uint64_t parse_bytes(std::string_view text, const std::string& what);

// "1.00 GiB", "512 B": human-readable binary size.
std::string format_bytes(double bytes);
// "1.234 ms", "56.7 us", "2.5 s".
std::string format_time(double seconds);

}  // namespace zerosim
