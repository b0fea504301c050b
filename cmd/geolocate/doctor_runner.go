package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"
)

// The doctor's runner: flags, the list of checks run in order, the
// checklist printed, and the lookups the checks share. The checks
// themselves are in doctor.go (the deployed stack) and
// doctor_predeploy.go (before cdk deploy).

// Check outcomes.
const (
	checkPass  = "pass"
	checkFail  = "fail"
	checkError = "error" // the check could not be made
)

// checkResult is one line of the checklist.
type checkResult struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Status string `json:"status"`
	Detail string `json:"detail"`
	// Fix is one line the operator can act on; empty when the check passed.
	Fix string `json:"fix,omitempty"`
	// cause is the error a check could not be made for; the text checklist
	// says a cause several checks share once (sharedCauses).
	cause error
}

const defaultMonitorPeriod = 5 * time.Minute

// maxPages bounds every paginated listing.
const maxPages = 100

// runDoctor: geolocate doctor [--stack NAME] [--monitor-period 5m]
// [--secret-id ID] [--json] — a checklist of a deployed stack; with
// --predeploy [--cdk-json FILE] [-c key=value ...], of a deployment before
// cdk deploy.
func runDoctor(ctx context.Context, c *cli, args []string) error {
	fs := c.newFlagSet("doctor", "")
	d := &doctor{c: c, now: time.Now}
	d.loc.register(fs, false)
	fs.StringVar(&d.secretID, "secret-id", "", "the API key's secret (default: the stack's "+outputSecretArn+" output)")
	fs.DurationVar(&d.monitorPeriod, "monitor-period", defaultMonitorPeriod, "the monitor's schedule period (the stack's monitorScheduleMinutes)")
	asJSON := fs.Bool("json", false, "print the checks as JSON")
	predeploy := fs.Bool("predeploy", false, "check a deployment before cdk deploy (bucket region, notification overlap, account concurrency) from cdk.json and -c settings")
	cdkJSON := fs.String("cdk-json", "cdk.json", "with --predeploy: the CDK app's settings file")
	overrides := contextFlags{}
	fs.Var(overrides, "c", "with --predeploy: a CDK context setting key=value, as cdk deploy -c takes it (repeatable)")
	fs.StringVar(&c.as, "as", "", `the command to name in the one-line error, instead of "geolocate: doctor" (make deploy passes --as "make deploy")`)
	smoke := fs.Bool("smoke", false, "prove the deployed pipeline end to end: 3 test uploads (2 paid predictions), their records and result events, one alarm notification, and a line per open reading of the docs; removes what it creates")
	sopts := smokeOptions{now: time.Now, sleep: sleepCtx, stdin: os.Stdin}
	fs.BoolVar(&sopts.yes, "yes", false, "with --smoke: go on without asking")
	fs.IntVar(&sopts.maxCredits, "max-credits", defaultSmokeMaxCredits, "with --smoke: the most credits the records may charge in all")
	fs.DurationVar(&sopts.timeout, "timeout", defaultSmokeTimeout, "with --smoke: how long to wait for the records, events and the alarm's delivery")
	awsEnv := fs.Bool("aws-environment", false, "only check the AWS credentials and region, and print the CDK environment they are for (aws://ACCOUNT/REGION): make bootstrap and make destroy run this first")
	fs.Usage = func() { doctorUsage(fs.Output(), fs.PrintDefaults) }
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	if *awsEnv {
		return printAWSEnvironment(ctx, c)
	}
	if d.monitorPeriod < time.Minute {
		return usageError{fmt.Errorf("--monitor-period %s: want at least 1m", d.monitorPeriod)}
	}
	if *smoke {
		if *predeploy || *asJSON {
			return usageError{errors.New("--smoke takes neither --predeploy nor --json")}
		}
		clients, err := loadAWS(ctx)
		if err != nil {
			return err
		}
		d.clients = clients
		return runSmoke(ctx, d, sopts)
	}
	checks := doctorChecks
	if *predeploy {
		plan, err := readDeployPlan(*cdkJSON, overrides)
		if err != nil {
			return usageError{err}
		}
		d.plan, d.loc.stack, checks = plan, plan.stackName, predeployChecks
	}
	clients, err := loadAWS(ctx)
	if err != nil {
		return err
	}
	d.clients = clients

	results := make([]checkResult, 0, len(checks))
	for _, chk := range checks {
		r := chk.run(d, ctx)
		r.ID, r.Title = chk.id, chk.title
		r.Detail, r.Fix = d.scrub(r.Detail), d.scrub(r.Fix)
		results = append(results, r)
	}
	passed := !slices.ContainsFunc(results, func(r checkResult) bool { return r.Status != checkPass })
	if *asJSON {
		enc := json.NewEncoder(c.stdout)
		enc.SetEscapeHTML(false) // the fixes' <placeholders> as typed
		err = enc.Encode(struct {
			Stack  string        `json:"stack"`
			Passed bool          `json:"passed"`
			Checks []checkResult `json:"checks"`
		}{d.loc.stack, passed, results})
	} else {
		err = printChecklist(c.stdout, d.loc.stack, c.key, results)
	}
	if err != nil {
		return err
	}
	if !passed {
		return errReported
	}
	return nil
}

func doctorUsage(w io.Writer, printDefaults func()) {
	fmt.Fprint(w, `usage: geolocate doctor [flags]

Checks a deployed stack after cdk deploy and prints one PASS or FAIL line per
check, with the fix for each failure:
  API key              the secret holds a geo_ key the service accepts, asked on
                       the prediction endpoint with no image (refused before any
                       prediction: nothing charged); the model list is free
  bucket notification  the bucket sends its uploads to the queue: an
                       s3:ObjectCreated:* notification (notifications=s3), or
                       EventBridge delivery and the stack's rule
                       (notifications=eventbridge, the default for an existing bucket)
  queue trigger        the predictor's event source mapping on the queue is Enabled
  monitor heartbeat    MonitorHealthy was 1 within 2 schedule periods
  alarm subscription   the alarm topic has a confirmed subscription
  dead-letter queue    no message waits in the dead-letter queue
  model ready          the configured model (or, without one, some model) is ready
  bucket region        the bucket is in the stack's region
Exit status 0 when every check passes, 1 otherwise. The service URL is
GEO_API_URL, else the predictor's.

With --predeploy it checks a deployment before cdk deploy instead (make
deploy runs it first), from cdk.json and the -c settings cdk would get:
  bucket region        an existing bucket is in the region being deployed to
  notification overlap with notifications=s3, no existing notification of the
                       bucket overlaps the uploads (S3 would refuse the stack's)
  account concurrency  maxConcurrency leaves the account's other functions
                       their share of its Lambda concurrency quota

It uses your own AWS credentials, read-only. IAM permissions it needs:
`)
	for _, p := range doctorPermissions {
		fmt.Fprintf(w, "  %-34s %s\n", p[0], p[1])
	}
	fmt.Fprintln(w, "\nflags:")
	printDefaults()
}

func printChecklist(w io.Writer, stack string, key string, results []checkResult) error {
	width := 0
	for _, r := range results {
		width = max(width, len(r.Title))
	}
	shared, causes := sharedCauses(results)
	var b strings.Builder
	fmt.Fprintf(&b, "stack %s\n", stack)
	count := map[string]int{}
	for i, r := range results {
		count[r.Status]++
		label := map[string]string{checkPass: "PASS", checkFail: "FAIL", checkError: "ERROR"}[r.Status]
		detail, fix := r.Detail, r.Fix
		if n, ok := shared[i]; ok {
			detail, fix = fmt.Sprintf("could not check: cause %d below", n+1), ""
		}
		fmt.Fprintf(&b, "%-5s  %-*s  %s\n", label, width, r.Title, detail)
		if fix != "" {
			fmt.Fprintf(&b, "%-5s  %-*s  fix: %s\n", "", width, "", fix)
		}
	}
	for n, c := range causes {
		fmt.Fprintf(&b, "cause %d, of %d checks: %s\n", n+1, c.checks, oneLine(c.err, key))
		if c.fix != "" {
			fmt.Fprintf(&b, "fix: %s\n", c.fix)
		}
	}
	fmt.Fprintf(&b, "%d checks: %d passed, %d failed, %d could not be checked\n",
		len(results), count[checkPass], count[checkFail], count[checkError])
	_, err := io.WriteString(w, b.String())
	return err
}

// sharedCause is one error that stopped several checks.
type sharedCause struct {
	err    error
	fix    string
	checks int
}

// sharedCauses finds the errors that stopped two checks or more (the stack
// that cannot be described, AWS unreachable: each check that needs the
// stack fails on the same lookup, which the doctor makes once). It maps each
// such check's index to its cause's index in causes, in order of first
// appearance. Two checks share a cause when their error chains end in the
// same error; the cause is the outermost error of the first chain that
// every chain of the group holds, so the context common to all is kept
// ("describe stack Geo: ...") and each check's own wrapping dropped.
func sharedCauses(results []checkResult) (shared map[int]int, causes []sharedCause) {
	groups := map[string][]int{}
	var order []string
	for i, r := range results {
		if r.Status != checkError || r.cause == nil {
			continue
		}
		root := errorChain(r.cause)
		k := root[len(root)-1].Error()
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	shared = map[int]int{}
	for _, k := range order {
		idx := groups[k]
		if len(idx) < 2 {
			continue
		}
		cause := commonCause(results, idx)
		for _, i := range idx {
			shared[i] = len(causes)
		}
		causes = append(causes, sharedCause{err: cause, fix: results[idx[0]].Fix, checks: len(idx)})
	}
	return shared, causes
}

// errorChain is err and what it wraps, outermost first (a joined error
// ends the chain).
func errorChain(err error) []error {
	var chain []error
	for ; err != nil; err = errors.Unwrap(err) {
		chain = append(chain, err)
	}
	return chain
}

// commonCause is the outermost error of the first result's chain whose text
// is in every other result's chain.
func commonCause(results []checkResult, idx []int) error {
	first := errorChain(results[idx[0]].cause)
	for _, e := range first {
		inAll := true
		for _, i := range idx[1:] {
			if !slices.ContainsFunc(errorChain(results[i].cause), func(o error) bool { return o.Error() == e.Error() }) {
				inAll = false
				break
			}
		}
		if inAll {
			return e
		}
	}
	return first[len(first)-1]
}

// doctor holds one run's settings and the lookups several checks share,
// each made at most once.
type doctor struct {
	c       *cli
	clients *awsClients
	// plan is the deployment --predeploy checks; nil for a deployed stack.
	plan          *deployPlan
	loc           stackLocator
	secretID      string
	monitorPeriod time.Duration
	now           func() time.Time

	queueArn  memo[string]
	mappings  memo[[]lambdatypes.EventSourceMappingConfiguration]
	predictor memo[map[string]string]
	service   memo[*keyOutcome]
}

// memo is a lookup made once.
type memo[T any] struct {
	done bool
	v    T
	err  error
}

func (m *memo[T]) get(f func() (T, error)) (T, error) {
	if !m.done {
		m.v, m.err = f()
		m.done = true
	}
	return m.v, m.err
}

func (d *doctor) scrub(s string) string {
	if d.c.key != "" {
		s = strings.ReplaceAll(s, d.c.key, "[redacted key]")
	}
	return s
}

func pass(detail string) checkResult { return checkResult{Status: checkPass, Detail: detail} }

func fail(detail, fix string) checkResult {
	return checkResult{Status: checkFail, Detail: detail, Fix: fix}
}

// couldNotCheck reports a read that failed; access denied gets the
// permissions as its fix.
func (d *doctor) couldNotCheck(err error) checkResult {
	r := checkResult{Status: checkError, Detail: "could not check: " + oneLine(err, d.c.key), cause: err}
	if isAccessDenied(err) {
		r.Fix = "grant your credentials the read-only permissions that geolocate doctor --help lists"
	}
	return r
}

func isAccessDenied(err error) bool {
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) {
		return false
	}
	switch apiErr.ErrorCode() {
	case "AccessDenied", "AccessDeniedException", "AuthorizationError", "AuthorizationErrorException", "UnauthorizedOperation":
		return true
	}
	return false
}

// printAWSEnvironment checks the credentials and region as every AWS
// command does (one line with what to set), asks STS whose they are, and
// prints the CDK environment: cdk bootstrap given aws://ACCOUNT/REGION
// needs no synthesis of the app, which took 20 s to 2 min before its own
// "Unable to resolve AWS account to use".
func printAWSEnvironment(ctx context.Context, c *cli) error {
	cfg, err := loadAWSConfig(ctx, c.getenv)
	if err != nil {
		return err
	}
	id, err := sts.NewFromConfig(cfg).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		return fmt.Errorf("sts:GetCallerIdentity: %w", err)
	}
	_, err = fmt.Fprintf(c.stdout, "aws://%s/%s\n", aws.ToString(id.Account), cfg.Region)
	return err
}
