// Placeholder translation unit so the library is never empty.
namespace zerosim::kernels { int kernels_placeholder() { return 0; } }
