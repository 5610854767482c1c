// Package config holds restmcp's typed configuration and loads it from
// command-line flags, RESTMCP_* environment variables and an optional YAML
// file, with the precedence flag > environment > file > default.
//
// The main type is [Config]; [Load] builds one and [Config.Validate] reports
// every problem at once. [Settings] lists every setting with its flag,
// environment variable, YAML key, default and meaning, and [SettingGroups]
// sorts them by concern, so docs/settings.md ([WriteMarkdown]) and --help
// ([WriteUsage]) are generated from one source, group by group.
//
// This package imports only the standard library and gopkg.in/yaml.v3. It must
// not import any other package of this module: cmd/restmcp is its only
// importer, and it copies the values into each package's own Options.
package config
