// meshctl: the local inspection and operator tool (README.md, "meshctl").
#include <CLI/CLI.hpp>

#include "tools/meshctl/commands.h"
#include "tools/meshctl/exit_codes.h"

namespace {

void add_keygen(CLI::App& app, mesh::ctl::KeygenOptions& options) {
  auto* cmd = app.add_subcommand("keygen", "Create an Ed25519 key pair; print the public key");
  cmd->add_option("--out", options.out_path, "Secret key file to create (mode 0600)")->required();
  cmd->add_flag("--json", options.json, "Print JSON");
}

void add_roster(CLI::App& app, mesh::ctl::RosterSignOptions& sign, mesh::ctl::RosterShowOptions& show) {
  auto* roster = app.add_subcommand("roster", "Sign or show the operator's roster");
  roster->require_subcommand(1);
  auto* sign_cmd = roster->add_subcommand("sign", "Turn a roster TOML file into a signed roster record");
  sign_cmd->add_option("--key", sign.key_path, "Operator secret key file")->required();
  sign_cmd->add_option("--out", sign.out_path, "Signed roster file to write")->required();
  sign_cmd->add_option("--version", sign.version, "Roster version (default: the file's `version`)");
  sign_cmd->add_option("roster", sign.toml_path, "Roster TOML file")->required();
  sign_cmd->add_flag("--json", sign.json, "Print JSON");
  auto* show_cmd = roster->add_subcommand("show", "Print a roster (from --data or --file)");
  auto* data = show_cmd->add_option("--data", show.data_dir, "meshnode data directory");
  auto* file = show_cmd->add_option("--file", show.file_path, "Signed roster file");
  data->excludes(file);
  show_cmd->add_option("--operator-key", show.operator_key, "Operator public key (hex) to check");
  show_cmd->add_flag("--json", show.json, "Print JSON");
}

void add_records(CLI::App& app, mesh::ctl::RecordsOptions& options) {
  auto* cmd = app.add_subcommand("records", "List the signed records in a store");
  cmd->add_option("--data", options.data_dir, "meshnode data directory")->required();
  cmd->add_flag("--verify", options.verify, "Check every record against the stored roster");
  cmd->add_option("--operator-key", options.operator_key,
                  "Operator public key (hex); with --verify the roster's signature is checked too");
  cmd->add_flag("--json", options.json, "Print JSON");
}

void add_status(CLI::App& app, mesh::ctl::StatusOptions& options) {
  auto* cmd = app.add_subcommand("status", "Show the verdicts a node's daemon computed (from its store)");
  cmd->add_option("--data", options.data_dir, "meshnode data directory")->required();
  cmd->add_flag("--json", options.json, "Print the stored snapshot as JSON");
}

void add_mesh(CLI::App& app, mesh::ctl::MeshOptions& options) {
  auto* cmd = app.add_subcommand("mesh", "Show what a node's store says of the node: roster, volume today");
  cmd->add_option("--data", options.data_dir, "meshnode data directory")->required();
  cmd->add_flag("--json", options.json, "Print JSON");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"meshctl: inspect a meshnode store, make keys, sign rosters"};
  app.require_subcommand(1);
  mesh::ctl::KeygenOptions keygen;
  mesh::ctl::RosterSignOptions sign;
  mesh::ctl::RosterShowOptions show;
  mesh::ctl::RecordsOptions records;
  mesh::ctl::StatusOptions status;
  mesh::ctl::MeshOptions mesh_options;
  add_keygen(app, keygen);
  add_status(app, status);
  add_mesh(app, mesh_options);
  add_roster(app, sign, show);
  add_records(app, records);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return mesh::ctl::kExitUsage;
  }
  if (app.got_subcommand("keygen")) return mesh::ctl::run_keygen(keygen);
  if (app.got_subcommand("records")) return mesh::ctl::run_records(records);
  if (app.got_subcommand("status")) return mesh::ctl::run_status(status);
  if (app.got_subcommand("mesh")) return mesh::ctl::run_mesh(mesh_options);
  auto* roster = app.get_subcommand("roster");
  if (roster->got_subcommand("sign")) return mesh::ctl::run_roster_sign(sign);
  return mesh::ctl::run_roster_show(show);
}
