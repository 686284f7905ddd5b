// ksched with one more plugin: every flag and subcommand of the stock binary (the
// scheduler, `simulate`, `explain`), and LabelPreference for profiles that enable it.
#include "cmd/ksched/app.h"
#include "label_preference.h"

int main(int argc, char** argv) {
  return ksched::app::Main(argc, argv, {{std::string(example::LabelPreference::kName), example::LabelPreference::New}});
}
