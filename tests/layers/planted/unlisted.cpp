// Planted as the fixture's sim/net/unlisted.cpp, which no zerosim_module() lists.
int unlisted() { return 0; }
