// Command geolocate is the operator's tool for the geolocation service:
// predict images, list models, read credits, and run the local simulator.
//
// Each subcommand lives in its own file and is listed in commands below; to
// add one, write a func(ctx, *cli, args) error and add a line there.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
)

// command is one subcommand.
type command struct {
	summary string
	run     func(ctx context.Context, c *cli, args []string) error
}

// commands is the dispatch table.
var commands = map[string]command{
	"predict":  {"predict where images were taken (costs credits)", runPredict},
	"models":   {"list the models the key may use", runModels},
	"credits":  {"show the account's remaining credits", runCredits},
	"simulate": {"run the service simulator on 127.0.0.1", runSimulate},
	"local":    {"run the whole pipeline on this machine (make run)", runLocal},
	"results":  {"list prediction records from the results table", runResults},
	"backfill": {"send existing objects of a bucket through the pipeline", runBackfill},
	"status":   {"credits, forecast, models and queue depths of a deployed stack", runStatus},
	"doctor":   {"check a deployed stack's setup: one pass/fail line per check, with fixes", runDoctor},
	"version":  {"print the module version and the commit it was built from", runVersion},
}

// stopSignals end a run the way Ctrl-C does: the long-running commands
// (local, simulate) stop what they started and exit. SIGTERM is what kill,
// make and process supervisors send; SIGHUP is what a closed terminal sends.
// Without them the default action would kill the process outright, skipping
// the deferred stops (the local parts' own parent-death signal is the last
// line of defence, not the first).
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

func main() {
	var command string
	if len(os.Args) > 1 {
		command = os.Args[1]
	}
	release := takeForeground(command)
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals...)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
	stop()
	release()
	os.Exit(code)
}

// Exit codes.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// run is the whole program, minus the process: tests call it directly.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	c := &cli{stdout: stdout, stderr: stderr, getenv: getenv, secrets: awsSecrets{}}
	return c.main(ctx, args)
}

// cli holds what every subcommand uses.
type cli struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	secrets        secretSource
	// key is the API key in use, remembered only to scrub it from any
	// message before printing.
	key string
}

func (c *cli) main(ctx context.Context, args []string) int {
	switch {
	case len(args) == 0:
		// No command is a mistake: the list goes to stderr, exit 2.
		c.usage(c.stderr)
		return exitUsage
	case args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help":
		// Asked for: stdout, exit 0, so `geolocate -h | less` works.
		c.usage(c.stdout)
		return exitOK
	case args[0] == "-version" || args[0] == "--version":
		args = []string{"version"}
	}
	cmd, ok := commands[args[0]]
	if !ok {
		c.printErr(fmt.Errorf("unknown command %q (run geolocate help)", args[0]))
		return exitUsage
	}
	err := cmd.run(ctx, c, args[1:])
	var usage usageError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errHelp):
		return exitOK
	case errors.Is(err, errReported):
		return exitError
	case errors.As(err, &usage):
		if usage.err != nil {
			c.printErr(fmt.Errorf("%s: %w", args[0], usage.err))
		}
		return exitUsage
	default:
		// A missing or expired AWS credential is said in one line with
		// what to do, whichever call of the command met it.
		if problem := credentialsProblem(err, c.getenv); problem != nil {
			err = problem
		}
		c.printErr(fmt.Errorf("%s: %w", args[0], err))
		return exitError
	}
}

func (c *cli) usage(w io.Writer) {
	fmt.Fprintln(w, "usage: geolocate COMMAND [flags] [args]")
	fmt.Fprintln(w, "\ncommands:")
	names := make([]string, 0, len(commands))
	for name := range commands {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(w, "  %-9s %s\n", name, commands[name].summary)
	}
	fmt.Fprintln(w, "\nenvironment: GEO_API_URL (required), GEO_API_KEY (or --secret-id)")
	fmt.Fprintln(w, "run geolocate COMMAND -h for a command's flags, geolocate --version for the build")
}

// printErr writes err as one line, with the key scrubbed out.
func (c *cli) printErr(err error) {
	msg := strings.Join(strings.Fields(err.Error()), " ")
	if c.key != "" {
		msg = strings.ReplaceAll(msg, c.key, "[redacted key]")
	}
	fmt.Fprintf(c.stderr, "geolocate: %s\n", msg)
}

// errHelp means the user asked for a command's help and got it: exit 0.
var errHelp = errors.New("help requested")

// errReported means the subcommand already printed its errors.
var errReported = errors.New("errors reported")

// usageError is a bad command line; err may be nil when flag already
// printed the problem.
type usageError struct{ err error }

func (e usageError) Error() string {
	if e.err == nil {
		return "usage error"
	}
	return e.err.Error()
}
