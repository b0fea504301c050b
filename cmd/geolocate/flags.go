package main

import (
	"errors"
	"flag"
	"fmt"
)

// newFlagSet returns a flag set that reports to the cli's stderr.
func (c *cli) newFlagSet(name, argsUsage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(c.stderr)
	fs.Usage = func() {
		c.printUsageLine(name, argsUsage)
		fs.PrintDefaults()
	}
	return fs
}

func (c *cli) printUsageLine(name, argsUsage string) {
	_, _ = c.stderr.Write([]byte("usage: geolocate " + name + " [flags] " + argsUsage + "\n"))
}

// parseFlags parses args, allowing flags after positional arguments
// ("predict a.jpg --json"), and returns the positional ones. "--" ends
// flag parsing.
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

func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, usageError{}
			}
			return nil, usageError{} // flag printed the problem
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
