// Names, nccl-tests' bus-bandwidth factors and the convenience groups.
#include <doctest/doctest.h>

#include "sim/core/error.hpp"
#include "tests/collectives/collectives_fixture.hpp"
#include "tests/support/approx.hpp"
#include "tests/support/input_error.hpp"

using namespace zerosim;

TEST_CASE("collective kinds and algorithms round-trip through their names") {
  for (CollKind k : {CollKind::AllGather, CollKind::ReduceScatter, CollKind::AllReduce,
                     CollKind::AllToAll, CollKind::SendRecv})
    CHECK(parse_coll_kind(to_string(k), "--op") == k);
  for (Algorithm a : {Algorithm::Ring, Algorithm::Hierarchical, Algorithm::Direct,
                      Algorithm::TwoHopAllToAll, Algorithm::IntraNode, Algorithm::Auto})
    CHECK(parse_algorithm(to_string(a), "--algo") == a);
  CHECK(std::string(to_string(CollKind::AllGather)) == "all_gather");
  CHECK(std::string(to_string(Algorithm::TwoHopAllToAll)) == "two_hop");
}

TEST_CASE("--op takes nccl-tests' and NCCL's spellings too; files take the names only") {
  const std::pair<const char*, CollKind> spellings[] = {{"allgather", CollKind::AllGather},
                                                        {"reducescatter", CollKind::ReduceScatter},
                                                        {"allreduce", CollKind::AllReduce},
                                                        {"alltoall", CollKind::AllToAll},
                                                        {"sendrecv", CollKind::SendRecv}};
  for (const auto& [spelling, kind] : spellings) {
    CHECK(parse_coll_op(spelling, "--op") == kind);
    CHECK(parse_coll_op(to_string(kind), "--op") == kind);
    CHECK_THROWS_AS(parse_coll_kind(spelling, "op"), InputError);
  }
}

TEST_CASE("a misspelled collective or algorithm is answered with the closest name") {
  CHECK(caught_input_error([&] { parse_coll_op("all_reduse", "--op"); })
            .rule()
            .find("did you mean 'all_reduce'?") != std::string::npos);
  CHECK(caught_input_error([&] { parse_coll_op("alreduce", "--op"); })
            .rule()
            .find("did you mean 'allreduce'?") != std::string::npos);
  CHECK(caught_input_error([&] { parse_algorithm("hierarchcal", "--algo"); })
            .rule()
            .find("did you mean 'hierarchical'?") != std::string::npos);
  CHECK(
      caught_input_error([&] { parse_coll_op("broadcast", "--op"); }).rule().find("did you mean") ==
      std::string::npos);
}

TEST_CASE("unknown names are input errors naming the flag and the choices") {
  const auto e = caught_input_error([&] { parse_coll_kind("allgather", "--op"); });
  CHECK(e.path() == "--op");
  CHECK(std::string(e.what()).find("all_gather|reduce_scatter") != std::string::npos);
  CHECK_THROWS_AS(parse_algorithm("tree", "--algo"), InputError);
}

TEST_CASE("bus-bandwidth factors are nccl-tests' (PERFORMANCE.md)") {
  CHECK(busbw_factor(CollKind::AllGather, 8) == zerosim::testing::Approx(7.0 / 8));
  CHECK(busbw_factor(CollKind::ReduceScatter, 16) == zerosim::testing::Approx(15.0 / 16));
  CHECK(busbw_factor(CollKind::AllReduce, 8) == zerosim::testing::Approx(2 * 7.0 / 8));
  CHECK(busbw_factor(CollKind::AllToAll, 4) == zerosim::testing::Approx(3.0 / 4));
  CHECK(busbw_factor(CollKind::SendRecv, 8) == 1.0);
  CHECK(busbw_factor(CollKind::AllGather, 1) == 0.0);
}

TEST_CASE("world, intra-node and rail groups of a 2-node DGX H100") {
  const Topology topo = test::dgx("dgx-h100", 2);
  REQUIRE(topo.gpus_per_node() == 8);
  const auto world = world_group(topo);
  REQUIRE(world.size() == 1);
  CHECK(world[0].size() == 16);
  CHECK(world[0][15] == 15);

  const auto quads = intra_node_groups(topo, 4);
  REQUIRE(quads.size() == 4);
  CHECK(quads[1] == std::vector<int>{4, 5, 6, 7});
  CHECK(quads[2] == std::vector<int>{8, 9, 10, 11});
  CHECK_THROWS_AS(intra_node_groups(topo, 3), InputError);
  CHECK_THROWS_AS(intra_node_groups(topo, 16), InputError);

  const auto rails = rail_groups(topo);
  REQUIRE(rails.size() == 8);
  CHECK(rails[3] == std::vector<int>{3, 11});
}
