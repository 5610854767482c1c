package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// Load builds the Config from command-line arguments (without the program
// name), environment variables looked up through getenv (os.Getenv in main;
// nil means none) and the YAML file named by --config or RESTMCP_CONFIG.
// Each setting takes the first of: its flag, its environment variable (an
// empty value counts as unset), its config file key, its default.
//
// Load prints nothing; --help and -h make it return an error that matches
// flag.ErrHelp, and the caller prints [WriteUsage]. Arguments left after the
// flags end up in Config.Args. Every problem — bad flags aside, which stop
// parsing — is returned in one error: unparsable values from every layer,
// then everything [Config.Validate] finds. The Config is the zero value
// whenever the error is not nil.
func Load(args []string, getenv func(string) string) (Config, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	settings := table()

	fs := flag.NewFlagSet("restmcp", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	flags := make(map[string]*rawFlag, len(settings))
	for _, s := range settings {
		if s.Flag == "" {
			continue
		}
		f := &rawFlag{}
		if s.field != nil {
			f.kind = valueKind(s.field(&Config{}))
		}
		fs.Var(f, s.Flag, s.Usage)
		flags[s.Flag] = f
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return Config{}, err
		}
		return Config{}, fmt.Errorf("parsing flags: %w (run with --help for the list)", err)
	}

	c := Default()
	if len(fs.Args()) > 0 {
		c.Args = fs.Args()
	}
	var errs []error

	// Layer 1: the config file.
	path := strings.TrimSpace(getenv(EnvConfig))
	if f := flags[FlagConfig]; f.set {
		path = f.value
	}
	if path != "" {
		c.ConfigFile = path
		errs = append(errs, loadFile(path, &c)...)
	}

	// Layer 2: the environment.
	for _, s := range settings {
		if s.field == nil {
			continue
		}
		v := strings.TrimSpace(getenv(s.Env))
		if v == "" {
			continue
		}
		if err := parseValue(s.field(&c), v); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s.Env, err))
		}
	}

	// Layer 3: the flags. Named --spec and --upstream values (NAME=VALUE)
	// build the apis list; the unnamed ones set spec and upstream.
	spec, upstream, apiErrs := applyAPIFlags(&c, flags["spec"].all, flags["upstream"].all)
	errs = append(errs, apiErrs...)
	flags["spec"].set, flags["upstream"].set = len(spec) > 0, len(upstream) > 0
	if len(spec) > 0 {
		flags["spec"].value = spec[0]
	}
	if len(upstream) > 0 {
		flags["upstream"].value = upstream[0]
	}
	for _, s := range settings {
		f := flags[s.Flag]
		if s.field == nil || f == nil || !f.set {
			continue
		}
		if err := parseValue(s.field(&c), f.value); err != nil {
			errs = append(errs, fmt.Errorf("--%s: %w", s.Flag, err))
		}
	}

	c.AllowedOrigins = normalizeOrigins(c.AllowedOrigins)
	errs = append(errs, c.Validate())
	if err := errors.Join(errs...); err != nil {
		return Config{}, err
	}
	return c, nil
}

// rawFlag records a flag's text; Load parses it after the lower layers so
// that every layer reports errors the same way. List and map flags
// accumulate: --allowed-origins a --allowed-origins b equals
// --allowed-origins a,b.
type rawFlag struct {
	kind  string // valueKind of the setting's field
	value string
	set   bool
	all   []string // every value given, in order (--spec and --upstream may name APIs)
}

func (f *rawFlag) String() string { return f.value }

func (f *rawFlag) Set(v string) error {
	v = strings.TrimSpace(v)
	f.all = append(f.all, v)
	if (f.kind == "list" || f.kind == "map") && f.set && f.value != "" {
		v = f.value + "," + v
	}
	f.value, f.set = v, true
	return nil
}

// IsBoolFlag lets "--require-key" stand for "--require-key=true".
func (f *rawFlag) IsBoolFlag() bool { return f.kind == "bool" }

// normalizeOrigins lower-cases origins and drops a trailing "/", the two
// differences from the Origin header that people most often write. An empty
// list becomes nil, so "allowed_origins: []" equals leaving it out.
func normalizeOrigins(in []string) []string {
	var out []string
	for _, o := range in {
		o = strings.TrimSpace(o)
		if o == "" {
			continue
		}
		out = append(out, strings.TrimSuffix(strings.ToLower(o), "/"))
	}
	return out
}
