#include "tools/meshsim/sim_node.h"

namespace mesh::sim {

void add_counters(gossip::Counters& into, const gossip::Counters& from) {
#define MESH_SIM_ADD_COUNTER(name) into.name += from.name;
  MESH_GOSSIP_COUNTERS(MESH_SIM_ADD_COUNTER)
#undef MESH_SIM_ADD_COUNTER
}

}  // namespace mesh::sim
