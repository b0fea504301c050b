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
	// needs is what the command works against, which groups the help.
	needs requirement
}

// requirement is what a command needs besides this machine.
type requirement int

const (
	needsNothing requirement = iota // runs here (version)
	needsLocal                      // runs everything here: no account, no key
	needsService                    // the service: GEO_API_URL and a key
	needsAWS                        // a deployed stack (or the local table), with AWS credentials
)

// commands is the dispatch table.
var commands = map[string]command{
	"predict":   {"predict where images were taken (costs credits)", runPredict, needsService},
	"models":    {"list the models (the key shows the ones granted to you too)", runModels, needsService},
	"credits":   {"show the account's remaining credits", runCredits, needsService},
	"simulate":  {"run the service simulator on 127.0.0.1", runSimulate, needsLocal},
	"local":     {"run the whole pipeline on this machine (make run)", runLocal, needsLocal},
	"results":   {"list prediction records from the results table", runResults, needsAWS},
	"backfill":  {"send existing objects of a bucket through the pipeline, as a job in the stack", runBackfill, needsAWS},
	"status":    {"credits, forecast, models and queue depths of a deployed stack", runStatus, needsAWS},
	"reprocess": {"ask a model again for existing results, as a named run within a credit cap", runReprocess, needsAWS},
	"jobs":      {"list the stack's backfill and reprocess jobs; show, pause, resume or cancel one", runJobs, needsAWS},
	"runs":      {"list reprocess runs: selection, model, cap, spent, done and remaining", runRuns, needsAWS},
	"compare":   {"what a reprocess run changed, and its accuracy before and after on photos with EXIF positions", runCompare, needsAWS},
	"doctor":    {"check a deployed stack's setup: one pass/fail line per check, with fixes", runDoctor, needsAWS},
	"version":   {"print the module version and the commit it was built from", runVersion, needsNothing},
}

// commandDetails add to a command's -h, after its summary, what the
// summary cannot say in a line.
var commandDetails = map[string]string{
	"status": `Prints one line per part: the service's credits and models (with the
stack's key, or GEO_API_KEY or --secret-id), the monitor's credit forecast,
the last day's records by status, the upload queue's and the dead-letter
queue's depths, and the dashboard's address. A part that cannot be read
says why on its line; the exit status is then 1. It only reads.`,
	"jobs": `geolocate jobs lists jobs (kind, state, done and remaining, credits
spent, rate, started, ETA); jobs show ID [--json] gives one; jobs pause,
resume and cancel ID take effect within a minute (the feeder's next run).
A job runs in the account: nothing here has to stay open.`,
	"results": `Reads the table named by --table, else TABLE_NAME, else the stack's
TableName output: after pasting the export line of geolocate local --serve,
that is the local table (no AWS account needed).`,
}

// needsLine says in a command's -h what it needs besides this machine.
func needsLine(r requirement) string {
	switch r {
	case needsLocal:
		return "Runs on this machine: no AWS account, no key."
	case needsService:
		return "Calls the service at GEO_API_URL with GEO_API_KEY (or the key in --secret-id);\nfor the simulator, geolocate simulate prints both."
	case needsAWS:
		return "Uses your AWS credentials (AWS_PROFILE, or AWS_ACCESS_KEY_ID and\nAWS_SECRET_ACCESS_KEY)."
	}
	return ""
}

// helpGroups are the help's sections, in order, each saying what its
// commands need.
var helpGroups = []struct {
	needs requirement
	title string
}{
	{needsLocal, "on this machine (no AWS account, no key):"},
	{needsService, "against the service (GEO_API_URL, and GEO_API_KEY or --secret-id;\ngeolocate simulate prints both for its simulator):"},
	{needsAWS, "against a deployed stack, with your AWS credentials (AWS_PROFILE, or\nAWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY; results also reads the local\ntable once the export line of geolocate local --serve is pasted):"},
	{needsNothing, "other:"},
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
	// name and cmd are the command being run, for its -h.
	name string
	cmd  command
	// key is the API key in use, remembered only to scrub it from any
	// message before printing.
	key string
	// as, when set (doctor --as "make deploy"), replaces "geolocate: NAME"
	// in the error line: the user ran make, not this command.
	as string
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
		c.printErr(unknownCommand(args[0]))
		return exitUsage
	}
	c.name, c.cmd = args[0], cmd
	err := c.checkRigShell(ctx)
	if err == nil {
		err = cmd.run(ctx, c, args[1:])
	}
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
			if c.name == "results" {
				// Without AWS, the local records are still at hand.
				err = fmt.Errorf("%w; for records of this machine: results reads a running `geolocate local --serve` once its export line is pasted, and `make run MAP=map.html` draws a local run's map", err)
			}
		}
		c.printErr(fmt.Errorf("%s: %w", c.label(), err))
		return exitError
	}
}

// label names the command in its error line: what the user ran (make
// deploy's check says "make deploy", not "doctor"; see --as).
func (c *cli) label() string {
	if c.as != "" {
		return c.as
	}
	return c.name
}

func (c *cli) usage(w io.Writer) {
	fmt.Fprintln(w, "usage: geolocate COMMAND [flags] [args]")
	names := make([]string, 0, len(commands))
	for name := range commands {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, g := range helpGroups {
		fmt.Fprintf(w, "\n%s\n", g.title)
		for _, name := range names {
			if commands[name].needs == g.needs {
				fmt.Fprintf(w, "  %-9s %s\n", name, commands[name].summary)
			}
		}
	}
	fmt.Fprintln(w, "\nrun geolocate COMMAND -h for a command's flags, geolocate --version for the build")
}

// printErr writes err as one line, with the key scrubbed out.
func (c *cli) printErr(err error) {
	msg := strings.Join(strings.Fields(err.Error()), " ")
	if c.key != "" {
		msg = strings.ReplaceAll(msg, c.key, "[redacted key]")
	}
	if c.as != "" {
		fmt.Fprintln(c.stderr, msg)
		return
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
