// Planted over the fixture's sim/net/net.cpp: net uses step, a module above it. Compiles, but the
// layer check must fail the build.
#include "sim/net/net.hpp"

#include "sim/step/step.hpp"
#include "sim/topology/topology.hpp"

int net_flows() { return topology_links(); }
int net_uses_step() { return step_time(); }
