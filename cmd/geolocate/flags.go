package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/geolocate-aws/geolocate/pkg/shared/didyoumean"
)

// newFlagSet returns a flag set whose usage goes to stdout when asked for
// (-h, --help: exit 0) and to stderr with a bad command line (exit 2).
func (c *cli) newFlagSet(name, argsUsage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(&flagOutput{stdout: c.stdout, stderr: c.stderr})
	fs.Usage = func() {
		w := fs.Output()
		printUsageLine(w, name, argsUsage)
		if c.name == name {
			c.describe(w)
		}
		fs.PrintDefaults()
	}
	return fs
}

// describe writes what the running command does and needs, between its
// usage line and its flags.
func (c *cli) describe(w io.Writer) {
	text := strings.ToUpper(c.cmd.summary[:1]) + c.cmd.summary[1:] + "."
	for _, more := range []string{commandDetails[c.name], needsLine(c.cmd.needs)} {
		if more != "" {
			text += "\n" + more
		}
	}
	_, _ = io.WriteString(w, "\n"+text+"\n\nflags:\n")
}

func printUsageLine(w io.Writer, name, argsUsage string) {
	_, _ = io.WriteString(w, "usage: geolocate "+name+" [flags] "+argsUsage+"\n")
}

// flagOutput is a flag set's output. While parsing it holds what the flag
// package writes until the outcome tells where it belongs: the usage asked
// for with -h on stdout, a complaint about a bad flag on stderr. Outside
// parsing (a command printing its usage after a missing argument) it
// writes to stderr.
type flagOutput struct {
	stdout, stderr io.Writer
	parsing        bool
	held           bytes.Buffer
}

func (o *flagOutput) Write(p []byte) (int, error) {
	if o.parsing {
		return o.held.Write(p)
	}
	return o.stderr.Write(p)
}

// parse runs fs.Parse with the output held, then releases it to stdout for
// a help request. A bad command line's complaint and usage are dropped: the
// error says it in one line (flagError), where the flag package printed
// the problem and then the whole usage (30 lines for results).
func (o *flagOutput) parse(fs *flag.FlagSet, args []string) error {
	o.parsing = true
	err := fs.Parse(args)
	o.parsing = false
	if errors.Is(err, flag.ErrHelp) {
		_, _ = o.held.WriteTo(o.stdout)
	}
	o.held.Reset()
	return err
}

// flagError is the flag package's complaint in one line, naming the flag
// meant when an unknown one is a typo of it, and where the flags are
// listed.
func flagError(fs *flag.FlagSet, err error) error {
	msg := err.Error()
	hint := fmt.Sprintf("geolocate %s -h lists the flags", fs.Name())
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		name = strings.TrimLeft(name, "-")
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		if near := didyoumean.Closest(name, names); near != "" {
			return fmt.Errorf("unknown flag --%s; did you mean --%s? (%s)", name, near, hint)
		}
		return fmt.Errorf("unknown flag --%s (%s)", name, hint)
	}
	return fmt.Errorf("%s (%s)", msg, hint)
}

// unknownCommand is the error for a command name geolocate does not have,
// naming the command meant when the name is a typo of one.
func unknownCommand(name string) error {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	slices.Sort(names) // one answer whatever the map's order
	if near := didyoumean.Closest(name, names); near != "" {
		return fmt.Errorf("unknown command %q; did you mean %s? (geolocate help lists the commands)", name, near)
	}
	return fmt.Errorf("unknown command %q (geolocate help lists the commands)", name)
}

// parseFlagsOnly parses a command that takes flags and no positional
// argument.
func parseFlagsOnly(fs *flag.FlagSet, args []string) error {
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageError{fmt.Errorf("unexpected argument %q", rest[0])}
	}
	return nil
}

// parseFlags parses args, allowing flags after positional arguments
// ("predict a.jpg --json"), and returns the positional ones. "--" ends
// flag parsing. -h or --help anywhere returns errHelp once the usage is
// printed.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	parse := fs.Parse
	if o, ok := fs.Output().(*flagOutput); ok {
		parse = func(args []string) error { return o.parse(fs, args) }
	}
	var positional []string
	for {
		if err := parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, errHelp
			}
			return nil, usageError{flagError(fs, err)}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(positional, rest...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// flagGiven reports whether the flag name was typed on the command line,
// which tells "left out" from "typed the default value".
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}
