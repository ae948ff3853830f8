#include <cstdio>
#include <cstdlib>

#include "workloads.hpp"

namespace stress {

std::string make_item(int producer, std::uint64_t seq, std::size_t size) {
  char head[40];
  int n = std::snprintf(head, sizeof head, "%05d:%011llu:", producer,
                        static_cast<unsigned long long>(seq));
  std::string item(head, static_cast<std::size_t>(n));
  item.resize(std::max(size, item.size()), '.');
  return item;
}

bool parse_item(std::string_view item, int& producer, std::uint64_t& seq) {
  if (item.size() < 18 || item[5] != ':' || item[17] != ':') return false;
  producer = std::atoi(std::string(item.substr(0, 5)).c_str());
  seq = std::strtoull(std::string(item.substr(6, 11)).c_str(), nullptr, 10);
  return true;
}

}  // namespace stress
