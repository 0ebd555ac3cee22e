// meshctl: the operator's inspection tool (README.md, "meshctl"): a node's
// state from its API or its store, keys, rosters, tokens.
#include <CLI/CLI.hpp>

#ifndef MESHNODE_VERSION
#define MESHNODE_VERSION "unknown"
#endif

#include "tools/meshctl/commands.h"
#include "tools/meshctl/exit_codes.h"

namespace {

// --data or --api (with its token, CA and TLS choice), --json, --no-color.
void add_read_options(CLI::App& cmd, mesh::ctl::ReadOptions& options) {
  auto& s = options.source;
  cmd.add_option("--data", s.data_dir, "meshnode data directory (read-only; no daemon needed)");
  cmd.add_option("--api", s.api_url, "A node's API: http://host:port or https://host:port");
  cmd.add_option("--token-file", s.token_file, "With --api: a file whose first line is the bearer token");
  cmd.add_option("--cacert", s.cacert_file, "With https: a PEM CA certificate to trust as well");
  cmd.add_flag("--insecure", s.insecure, "With https: do not verify the certificate (says so on stderr)");
  cmd.add_flag("--json", options.json, "Print the API's JSON (or the store's equivalent)");
  cmd.add_flag("--no-color", options.no_color, "Never colour the output");
}

void add_keygen(CLI::App& app, mesh::ctl::KeygenOptions& options) {
  auto* cmd = app.add_subcommand("keygen", "Create an Ed25519 key pair; print the public key");
  cmd->add_option("--out", options.out_path, "Secret key file to create (mode 0600)")->required();
  cmd->add_flag("--json", options.json, "Print JSON");
}

void add_key(CLI::App& app, mesh::ctl::KeyShowOptions& options) {
  auto* key = app.add_subcommand("key", "Key files");
  key->require_subcommand(1);
  auto* show = key->add_subcommand("show", "Print the public key (64 hex) of an existing secret key file");
  show->add_option("file", options.path, "Secret key file (meshctl keygen --out)")->required();
  show->add_flag("--json", options.json, "Print JSON");
}

void add_roster(CLI::App& app, mesh::ctl::RosterSignOptions& sign, mesh::ctl::RosterShowOptions& show,
                mesh::ctl::RosterPushOptions& push) {
  auto* roster = app.add_subcommand("roster", "Sign or show the operator's roster");
  roster->require_subcommand(1);
  auto* sign_cmd = roster->add_subcommand("sign", "Turn a roster TOML file into a signed roster record");
  sign_cmd->add_option("--key", sign.key_path, "Operator secret key file")->required();
  sign_cmd->add_option("--out", sign.out_path, "Signed roster file to write")->required();
  sign_cmd->add_option("--version", sign.version, "Roster version (default: the file's `version`)");
  sign_cmd->add_option("roster", sign.toml_path, "Roster TOML file")->required();
  sign_cmd->add_flag("--json", sign.json, "Print JSON");
  auto* show_cmd = roster->add_subcommand("show", "Print a roster (from --data or --file), checked");
  auto* data = show_cmd->add_option("--data", show.data_dir, "meshnode data directory");
  auto* file = show_cmd->add_option("--file", show.file_path, "Signed roster file");
  data->excludes(file);
  show_cmd->add_option("--operator-key", show.operator_key, "Operator public key (hex) to check (required)");
  show_cmd->add_flag("--no-verify", show.no_verify, "Show the roster without checking it (marked NOT VERIFIED)");
  show_cmd->add_flag("--json", show.json, "Print JSON");
  auto* push_cmd = roster->add_subcommand("push", "Hand a signed roster to a node's API (admin token); gossip spreads it");
  auto& s = push.source;
  push_cmd->add_option("--api", s.api_url, "A node's API: http://host:port or https://host:port")->required();
  push_cmd->add_option("--token-file", s.token_file, "A file whose first line is an admin bearer token")->required();
  push_cmd->add_option("--cacert", s.cacert_file, "With https: a PEM CA certificate to trust as well");
  push_cmd->add_flag("--insecure", s.insecure, "With https: do not verify the certificate (says so on stderr)");
  push_cmd->add_option("file", push.file_path, "Signed roster file (meshctl roster sign --out)")->required();
  push_cmd->add_flag("--json", push.json, "Print the node's JSON answer");
}

void add_records(CLI::App& app, mesh::ctl::RecordsOptions& options) {
  auto* cmd = app.add_subcommand("records", "List the signed records in a store");
  cmd->add_option("--data", options.data_dir, "meshnode data directory")->required();
  cmd->add_flag("--verify", options.verify, "Check the roster, then every record against it");
  cmd->add_option("--operator-key", options.operator_key,
                  "Operator public key (hex); required with --verify");
  cmd->add_flag("--json", options.json, "Print JSON");
}

void add_status(CLI::App& app, mesh::ctl::StatusOptions& options) {
  auto* cmd = app.add_subcommand("status", "Every server's status, caption and failing witnesses");
  add_read_options(*cmd, options.read);
  cmd->add_option("--status", options.filter.status, "Only servers with this status: ok, unavailable, "
                                                     "unreachable or no_data");
  cmd->add_option("--country", options.filter.country, "Only servers in this country (ISO code)");
  cmd->add_option("--route", options.filter.route, "Only servers of this route");
}

void add_routes(CLI::App& app, mesh::ctl::RoutesOptions& options) {
  auto* cmd = app.add_subcommand("routes", "Each route, degraded or not, and its servers in rotation");
  add_read_options(*cmd, options.read);
  cmd->add_option("--country", options.country, "The rotation for users in this country (ISO code)");
}

void add_server(CLI::App& app, mesh::ctl::ServerOptions& options) {
  auto* cmd = app.add_subcommand("server", "One server: status, witnesses, metrics, each observer's streak");
  cmd->add_option("id", options.id, "Server id")->required();
  add_read_options(*cmd, options.read);
}

void add_mesh(CLI::App& app, mesh::ctl::ReadOptions& options) {
  auto* cmd = app.add_subcommand("mesh", "The node's view of the mesh: roster, digest, records, peers, volume");
  add_read_options(*cmd, options);
}

void add_token(CLI::App& app, mesh::ctl::TokenOptions& options) {
  auto* token = app.add_subcommand("token", "API bearer tokens");
  token->require_subcommand(1);
  auto* make = token->add_subcommand("new", "Make a token; print it and the line for the token file");
  make->add_option("--role", options.role, "read or admin")->required();
  make->add_flag("--json", options.json, "Print JSON");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"meshctl: inspect a meshnode (its API or its store), make keys, sign and push rosters"};
  app.set_version_flag("--version", "meshctl " MESHNODE_VERSION, "Print the version and exit");
  app.require_subcommand(1);
  mesh::ctl::KeygenOptions keygen;
  mesh::ctl::RosterSignOptions sign;
  mesh::ctl::RosterShowOptions show;
  mesh::ctl::RosterPushOptions push;
  mesh::ctl::KeyShowOptions key_show;
  mesh::ctl::RecordsOptions records;
  mesh::ctl::StatusOptions status;
  mesh::ctl::RoutesOptions routes;
  mesh::ctl::ServerOptions server;
  mesh::ctl::ReadOptions mesh_options;
  mesh::ctl::TokenOptions token;
  add_status(app, status);
  add_routes(app, routes);
  add_server(app, server);
  add_mesh(app, mesh_options);
  add_records(app, records);
  add_keygen(app, keygen);
  add_key(app, key_show);
  add_roster(app, sign, show, push);
  add_token(app, token);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return mesh::ctl::kExitUsage;
  }
  if (app.got_subcommand("status")) return mesh::ctl::run_status(status);
  if (app.got_subcommand("routes")) return mesh::ctl::run_routes(routes);
  if (app.got_subcommand("server")) return mesh::ctl::run_server(server);
  if (app.got_subcommand("mesh")) return mesh::ctl::run_mesh(mesh_options);
  if (app.got_subcommand("records")) return mesh::ctl::run_records(records);
  if (app.got_subcommand("keygen")) return mesh::ctl::run_keygen(keygen);
  if (app.got_subcommand("token")) return mesh::ctl::run_token_new(token);
  if (app.got_subcommand("key")) return mesh::ctl::run_key_show(key_show);
  auto* roster = app.get_subcommand("roster");
  if (roster->got_subcommand("sign")) return mesh::ctl::run_roster_sign(sign);
  if (roster->got_subcommand("push")) return mesh::ctl::run_roster_push(push);
  return mesh::ctl::run_roster_show(show);
}
