// The stock ksched binary: the in-tree plugins only (cmd/ksched/app.h).
#include "cmd/ksched/app.h"

int main(int argc, char** argv) { return ksched::app::Main(argc, argv); }
