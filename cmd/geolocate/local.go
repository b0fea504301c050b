package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/alarmeval"
	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
	"github.com/geolocate-aws/geolocate/pkg/local/pipeline"
	"github.com/geolocate-aws/geolocate/pkg/monitor"
	"github.com/geolocate-aws/geolocate/pkg/predictor"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
	"github.com/geolocate-aws/geolocate/pkg/shared/settings"
)

// runLocal: geolocate local [--images DIR] [--watch] [--json] — the whole
// pipeline on this machine (what `make run` runs).
//
// Exit status: 0 when every upload ended with a record that is final and
// not failed (succeeded, or rejected as unusable input, which spends
// nothing); 1 when an upload was lost (no final record and no dead letter:
// a bug), or when some image failed or was dead-lettered, since then it was
// not geolocated and someone has to look. The message says which. A stop
// (Ctrl-C, SIGTERM, SIGHUP) at any moment is 0: the user asked for it.
func runLocal(ctx context.Context, c *cli, args []string) error {
	fs := c.newFlagSet("local", "")
	var (
		images      = fs.String("images", "", "folder of images to upload, subfolders included (the key is the path below it); hidden files and folders and symbolic links are skipped and listed (default: the sample images, testdata/images and a generated photo over the 10 MB limit, in a temporary copy removed at the end)")
		prefix      = fs.String("prefix", "", "key prefix of the uploads (e.g. uploads/)")
		watch       = fs.Bool("watch", false, "after the first pass, keep uploading new files dropped in --images until Ctrl-C")
		serve       = fs.Bool("serve", false, "serve a whole local stack (S3, DynamoDB, SQS, Lambda, EventBridge, CloudWatch, SNS, CloudFormation stand-ins with the predictor on the queue, the monitor and the job feeder on their schedules), upload the images without processing them, print the export line that points the CLI and the functions at it, and wait for Ctrl-C; then print what ran")
		asJSON      = fs.Bool("json", false, "print the results and the monitor report as JSON")
		verbose     = fs.Bool("verbose", false, "also print the functions' JSON logs and metrics to stderr")
		unversioned = fs.Bool("unversioned", false, "use a bucket with versioning off, as an existing bucket (existingBucketName) may be; the stack's own bucket is versioned")
		dashboard   = fs.String("dashboard", "", "at the end of the run (or on a stop), write the stack's CloudWatch dashboard drawn from the run's metrics and alarms to this self-contained HTML file")
		stackTmpl   = fs.String("template", defaultStackTemplate, "synthesized stack template for --dashboard and --dashboard-demo, and, when given, for the results pipe whose events the run prints (make synth writes it; default: the default configuration's pipe)")
		eventsFile  = fs.String("events", "", "write each result event the stack's results pipe would publish (one per photo that reaches a final status) to this file, as JSON lines")
		demoWidgets = fs.String("widgets", "", "with --dashboard-demo: also write the page's widgets (type and title, in order) to this JSON file (make screenshots commits it beside the picture)")
		demo        = fs.String("dashboard-demo", "", "instead of a run, write the stack's dashboard drawn from a simulated busy day (uploads all day and a half-hour outage of the service, played in seconds on a simulated clock) to this HTML file: what the dashboard looks like in operation")
		service     = fs.String("service", serviceSimulator, "the geolocation service the functions call: "+serviceSimulator+" (built in, free) or "+serviceReal+" (the service at GEO_API_URL with GEO_API_KEY: paid predictions; make run SERVICE=real); GEO_API_URL alone never selects it")
		profile     = fs.String("profile", string(geosim.ProfileContract), "the simulator's profile: contract (the contract, with the public backend where it is silent) or backend (the backend in full: keys refused off predict, its own key header, 30 predictions a minute)")
		meta        = uploadMetadataFlag(fs, "", "; default "+settings.UploadMetadata.Env+", else "+settings.UploadMetadata.Default)
		reuse       = newSettingFlag(fs, "reuse-results", settings.ReuseResults, "",
			"whether a photo already answered is answered again: content (pay once per photo: an answer is reused for every upload that sends the same bytes with the same request) or off (pay once per object version)",
			"; default "+settings.ReuseResults.Env+", else "+settings.ReuseResults.Default)
		notifyFlag = newSettingFlag(fs, "notifications", settings.Notifications, pipeline.NotificationsS3,
			"how uploads reach the queue, as the stack's notifications setting: s3 (S3's event notification) or eventbridge (S3's EventBridge event, what an existing bucket gets by default)", "")
		asMap = registerMapFlags(fs)
	)
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	simProfile, err := geosim.ParseProfile(*profile)
	if err != nil {
		return usageError{fmt.Errorf("--profile: %w", err)}
	}
	// The setting flags win over their variables in the shell, as -c wins
	// over cdk.json.
	overrides := map[string]string{}
	for _, f := range []settingFlag{meta, reuse} {
		v, err := f.check(true)
		if err != nil {
			return err
		}
		if v != "" {
			overrides[f.setting.Env] = v
		}
	}
	if err := asMap.check(); err != nil {
		return err
	}
	if *asMap.path != "" && *serve {
		return usageError{errors.New("--map draws a one-pass run's records: with --serve, run results --map in the shell of its export line")}
	}
	if *demo != "" {
		if *dashboard != "" || *serve || *watch || *asMap.path != "" || *images != "" || *eventsFile != "" {
			return usageError{errors.New("--dashboard-demo draws a simulated day instead of a run: it takes --template only")}
		}
		return writeDashboardDemo(ctx, *demo, *demoWidgets, *stackTmpl, c.stderr)
	}
	c.key = c.getenv(envvars.APIKey) // scrubbed from any message
	external, err := c.localService(*service)
	if err != nil {
		return err
	}
	notify, err := notifyFlag.check(false)
	if err != nil {
		return err
	}
	if *watch && *images != "" && isCheckoutSamples(*images) {
		return usageError{fmt.Errorf("--watch on %s would leave the files dropped there in the repository, where later runs upload them and tests read them: name another folder, or leave --images out to watch a temporary copy", *images)}
	}
	var dash *localDashboard
	if *dashboard != "" {
		if *serve {
			return fmt.Errorf("--dashboard draws a one-pass run's metrics at its end: --serve runs until stopped")
		}
		var err error
		if dash, err = newLocalDashboard(*dashboard, *stackTmpl, time.Now()); err != nil {
			return err
		}
	}
	if *images == "" {
		dir, remove, err := sampleImages()
		if err != nil {
			return err
		}
		defer remove()
		*images = dir
		how := "removed at the end; --images DIR (make run IMAGES=DIR) uploads your own"
		if *watch {
			how = "watched: drop photos there; removed at the end"
		}
		fmt.Fprintf(c.stderr, "images    %s: a temporary copy of testdata/images plus a generated photo over 10 MB (%s)\n", dir, how)
	}

	opts := pipeline.Options{
		ImagesDir:     *images,
		KeyPrefix:     *prefix,
		Watch:         *watch,
		Unversioned:   *unversioned,
		Notifications: notify,
		Profile:       simProfile,
		External:      external,
		Getenv:        c.getenv,
		Progress:      c.stderr,
	}
	if len(overrides) > 0 {
		opts.Getenv = func(name string) string {
			if v, ok := overrides[name]; ok {
				return v
			}
			return c.getenv(name)
		}
	}
	if *verbose {
		opts.FunctionLogs = c.stderr
	}
	templateGiven := false
	fs.Visit(func(f *flag.Flag) { templateGiven = templateGiven || f.Name == "template" })
	events, err := newLocalEvents(*eventsFile, *stackTmpl, templateGiven, !*serve)
	if err != nil {
		return err
	}
	defer events.close()
	opts.Events, opts.OnEvent = events.pipe, events.write
	if dash != nil {
		opts.Metrics = dash.metrics
	}
	if *serve {
		alarms, note, err := servedAlarms(*stackTmpl, templateGiven)
		if err != nil {
			return err
		}
		started := time.Now()
		err = pipeline.Serve(ctx, opts, func(o *pipeline.ServeOptions) {
			o.Alarms = alarms
			// The note waits until the stack is up: a bad --images is
			// said alone, before anything starts.
			o.Ready = func(map[string]string) {
				if note != "" {
					fmt.Fprintln(c.stderr, note)
				}
			}
		})
		if err == nil && ctx.Err() != nil {
			fmt.Fprintln(c.stderr, serveStopped(time.Since(started), opts.External == nil))
		}
		return stoppedIsSuccess(ctx, c, err)
	}
	sum, runErr := pipeline.Run(ctx, opts)
	runErr = errors.Join(runErr, events.close())
	if dash != nil {
		if sum != nil {
			dash.records = sum.Records()
		}
		// Also after a stop: the page shows what the run got to.
		if err := dash.write(time.Now(), c.stderr); err != nil {
			runErr = errors.Join(runErr, err)
		}
	}
	// A stop (Ctrl-C, make's SIGTERM) is how watch mode finishes, and in a
	// one-pass run it is the user's choice too, even while the parts
	// start: status 0, the report of what the run got to, and no verdict
	// on uploads the stop cut short (they show as queued, or failed with
	// outcome_unknown, said below the table).
	stopped := runErr != nil && ctx.Err() != nil
	runErr = stoppedIsSuccess(ctx, c, runErr)
	if sum == nil {
		return runErr
	}
	if *asJSON {
		if err := writeIndentedJSON(c.stdout, localJSON(sum, stopped)); err != nil {
			return err
		}
	} else if err := writeLocalReport(c.stdout, sum, stopped); err != nil {
		return err
	}
	if runErr != nil {
		return runErr
	}
	if stopped {
		if n := sum.Counts()["queued"]; n > 0 {
			fmt.Fprintf(c.stderr, "stopped   %d upload(s) not processed: still queued at the stop\n", n)
		}
	} else if err := localVerdict(sum); err != nil {
		return err
	}
	return asMap.write(sum.Records(), "geolocate local: "+strconv.Itoa(len(sum.Results))+" upload(s)",
		[]string{"Images from " + *images + ", service: " + sum.Service + ", in upload order."}, c.stderr)
}

// servedAlarms are the names of the synthesized stack's alarms, which
// local --serve's CloudWatch holds (SetAlarmState, DescribeAlarms). Without
// a template (no make synth yet, and --template not given) it serves none,
// and note says so.
func servedAlarms(path string, given bool) (alarms []string, note string, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if given || !errors.Is(err, fs.ErrNotExist) {
			return nil, "", fmt.Errorf("--template: %w", err)
		}
		return nil, fmt.Sprintf("alarms    none served: %s is not there (make synth writes it; the stack's alarms come from it)", path), nil
	}
	parsed, err := alarmeval.ParseTemplate(data, func(o *alarmeval.ParseOptions) {
		o.Refs = map[string]string{"AWS::StackName": pipeline.DefaultStackName}
	})
	if err != nil {
		return nil, "", fmt.Errorf("--template %s: %w", path, err)
	}
	for _, a := range parsed {
		alarms = append(alarms, a.Name)
	}
	return alarms, "", nil
}

// The --service values.
const (
	serviceSimulator = "simulator"
	serviceReal      = "real"
)

// localService resolves --service: nil for the simulator, whatever the
// shell exports (a GEO_API_URL left from the README's CLI section, an
// operator's paid key); the service at GEO_API_URL only when asked by name.
func (c *cli) localService(choice string) (*pipeline.ExternalService, error) {
	url, key := strings.TrimSpace(c.getenv(envvars.APIURL)), c.getenv(envvars.APIKey)
	switch choice {
	case serviceSimulator:
		if url != "" {
			fmt.Fprintf(c.stderr, "note      %s=%s in this shell is not called: the run uses the simulator (--service %s, make run SERVICE=%s, calls it)\n",
				envvars.APIURL, url, serviceReal, serviceReal)
		}
		return nil, nil
	case serviceReal:
		if url == "" || key == "" {
			return nil, usageError{fmt.Errorf("--service %s calls the service at %s with %s: set both (or leave --service out for the simulator)",
				serviceReal, envvars.APIURL, envvars.APIKey)}
		}
		return &pipeline.ExternalService{URL: url, Key: key}, nil
	}
	return nil, usageError{fmt.Errorf("--service %q: want %s or %s", choice, serviceSimulator, serviceReal)}
}

// serveStopped is what local --serve says when Ctrl-C stops it: it stopped
// without a word, and a shell still holding its export line kept pointing
// at endpoints that no longer answer.
func serveStopped(ran time.Duration, simulated bool) string {
	parts := "S3 and DynamoDB Local"
	if simulated {
		parts = "the simulator, " + parts
	}
	return fmt.Sprintf("stopped   after %s: %s stopped, and what the functions wrote there with them (the local bucket and table last only while --serve runs); "+
		"a shell holding the export line now points at nothing: start --serve again, or open a new shell for the AWS commands",
		ran.Round(time.Second), parts)
}

// stoppedIsSuccess makes a stop the user asked for (Ctrl-C, SIGTERM,
// SIGHUP: ctx is done) a success for the modes that run until stopped,
// whatever it interrupted: the exit status then says "stopped as asked",
// and make does not print "Error 1" for it.
func stoppedIsSuccess(ctx context.Context, c *cli, err error) error {
	if err != nil && ctx.Err() != nil {
		// err is the interruption itself (a start-up wait cut short), not
		// news to the user who asked for it.
		fmt.Fprintln(c.stderr, "stopped   on request")
		return nil
	}
	return err
}

// localVerdict turns the summary into the command's exit status.
func localVerdict(sum *pipeline.Summary) error {
	if lost := sum.Lost(); len(lost) > 0 {
		keys := make([]string, 0, len(lost))
		for _, r := range lost {
			keys = append(keys, r.Upload.Key)
		}
		return fmt.Errorf("%d upload(s) LOST (no final record, no dead letter): %s", len(lost), strings.Join(keys, ", "))
	}
	counts := sum.Counts()
	if n := counts["failed"] + counts["dead-lettered"]; n > 0 {
		return fmt.Errorf("%d image(s) not geolocated (failed or dead-lettered); see the table above", n)
	}
	return nil
}

// reasonDeadLetter marks a row whose message went to the dead-letter queue
// before any record was written: its cause is the dead letter's last failure.
const reasonDeadLetter = "dead_letter"

// reasonStopped is the reason of an upload the user's stop left unfinished.
const reasonStopped = "stopped before it finished"

// stopArtefacts are the predictor's retry reasons (pkg/predictor's
// outcome.go) a stop itself gives an upload it cuts short: a slot wait, a
// ledger write or an invocation's deadline interrupted. With the stop, they
// are not news: the stop is the cause.
var stopArtefacts = []string{predictor.CodeRateWait, "ledger_error", "deadline_near"}

// cutShortByStop reports a row the user's stop left unfinished whose
// recorded reason is the stop's doing ("queued (rate_wait_timeout)",
// "claim content ...: context canceled"), not an earlier wait of its own
// (out of credits, no key), which stays as recorded.
func cutShortByStop(row resultRow) bool {
	if row.Status != "queued" {
		return false
	}
	return row.Reason == "" || slices.Contains(stopArtefacts, row.Reason) ||
		strings.Contains(row.Detail, context.Canceled.Error()) || strings.Contains(row.Detail, context.DeadlineExceeded.Error())
}

// localRows are the results as printed rows, in upload order. After a stop
// (stopped), an upload the stop cut short says so instead of the errors
// the stop caused.
func localRows(sum *pipeline.Summary, stopped bool) []resultRow {
	rows := make([]resultRow, 0, len(sum.Results))
	for _, r := range sum.Results {
		row := resultRow{
			Object: "s3://" + r.Upload.Bucket + "/" + r.Upload.Key,
			Bucket: r.Upload.Bucket, Key: r.Upload.Key, VersionID: r.Upload.VersionID,
		}
		if r.Record != nil {
			row = rowFromRecord(r.Record)
		}
		row.Status = r.Status()
		if r.Record == nil && r.DeadLetter != nil {
			row.Reason = reasonDeadLetter
			row.Detail = r.DeadLetter.LastFailure
		}
		if stopped && cutShortByStop(row) {
			row.Reason, row.Detail = reasonStopped, ""
		}
		rows = append(rows, row)
	}
	return rows
}

// writeLocalReport prints a run's report; stopped says the user stopped it.
func writeLocalReport(w io.Writer, sum *pipeline.Summary, stopped bool) error {
	fmt.Fprintln(w)
	if err := writeResultsTable(w, localRows(sum, stopped), false); err != nil {
		return err
	}
	counts := sum.Counts()
	statuses := make([]string, 0, len(counts))
	for s := range counts {
		statuses = append(statuses, s)
	}
	sort.Strings(statuses)
	var parts []string
	for _, s := range statuses {
		parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
	}
	fmt.Fprintf(w, "\n%d upload(s): %s; %d credit(s) recorded", len(sum.Results), dash(strings.Join(parts, ", ")), sum.CreditsRecorded())
	if sum.Simulated {
		fmt.Fprintf(w, ", %d charged by the simulator in %d call(s)", sum.CreditsCharged, sum.PredictCalls)
	}
	fmt.Fprintf(w, "; %s\n", sum.Elapsed.Round(100*time.Millisecond))
	writeInterruptedCalls(w, sum)
	if a, ok := measureAccuracy(sum.Records()); ok {
		a.Simulated = sum.Simulated
		fmt.Fprintf(w, "accuracy: %s\n", a)
	}
	writeEventsLine(w, sum)
	for _, d := range sum.DeadLetters {
		fmt.Fprintf(w, "dead letter %s after %d receives: %s\n", d.ID, d.ReceiveCount, dash(d.LastFailure))
	}
	fmt.Fprintln(w)
	writeMonitorReport(w, sum.Monitor, sum.MonitorError)
	return nil
}

// writeInterruptedCalls says in plain words what a call cut off after the
// photo was sent did (a stop, a timeout): the record says outcome_unknown
// because the answer never came, but the service may have charged it, and
// the simulator's own count says whether it did.
func writeInterruptedCalls(w io.Writer, sum *pipeline.Summary) {
	unknown := 0
	for _, r := range sum.Results {
		if r.Record != nil && r.Record.ErrorCode == ledger.ErrorCodeOutcomeUnknown {
			unknown++
		}
	}
	unrecorded := sum.CreditsCharged - sum.CreditsRecorded()
	switch {
	case sum.Simulated && unrecorded > 0:
		fmt.Fprintf(w, "interrupted: %d credit(s) charged for calls whose answer never came (cut off after the photo was sent: %d record(s) say %s): a real service charges these too\n",
			unrecorded, unknown, ledger.ErrorCodeOutcomeUnknown)
	case unknown > 0 && sum.Simulated:
		fmt.Fprintf(w, "interrupted: %d call(s) cut off before the service charged them (records say %s): nothing charged for them\n",
			unknown, ledger.ErrorCodeOutcomeUnknown)
	case unknown > 0:
		fmt.Fprintf(w, "interrupted: %d call(s) cut off after the photo was sent (records say %s): the service may have charged them; its credit summary says\n",
			unknown, ledger.ErrorCodeOutcomeUnknown)
	}
}

func writeMonitorReport(w io.Writer, rep *monitor.Report, failure string) {
	if rep == nil {
		fmt.Fprintf(w, "monitor: %s\n", dash(failure))
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	health := "healthy"
	if !rep.Healthy {
		health = "UNHEALTHY: " + strings.Join(rep.Reasons, "; ")
	}
	fmt.Fprintf(tw, "monitor\t%s\n", health)
	if cr := rep.Credits; cr != nil {
		fmt.Fprintf(tw, "credits remaining\t%g (%s)\n", cr.Remaining, cr.Source)
	}
	if rep.CreditNote != "" {
		fmt.Fprintf(tw, "credit watch\t%s\n", rep.CreditNote)
	}
	if f := rep.Forecast; f != nil {
		fmt.Fprintf(tw, "forecast\t%s\n", f.Describe())
	}
	if m := rep.Models; m != nil {
		public := ""
		if m.PublicOnly {
			public = " (the public list: the service lists models only without a key)"
		}
		fmt.Fprintf(tw, "models\t%d ready, %d down, %d unknown%s\n", m.Ready, m.Down, m.Unknown, public)
		configured := "default model"
		if m.ConfiguredModel != "" {
			configured = m.ConfiguredModel
		}
		fmt.Fprintf(tw, "configured model available\t%t (%s)\n", m.ConfiguredAvailable, configured)
	}
	for _, warning := range rep.Warnings {
		fmt.Fprintf(tw, "warning\t%s\n", warning)
	}
	_ = tw.Flush()
}

// localJSONReport is the --json output of local.
type localJSONReport struct {
	Service        string          `json:"service"`
	Results        []resultRow     `json:"results"`
	Lost           []string        `json:"lost"`
	DeadLetters    int             `json:"dead_letters"`
	CreditsCharged *int            `json:"credits_charged,omitempty"` // simulator only
	Monitor        *monitor.Report `json:"monitor,omitempty"`
	MonitorError   string          `json:"monitor_error,omitempty"`
}

func localJSON(sum *pipeline.Summary, stopped bool) localJSONReport {
	rep := localJSONReport{
		Service:      sum.Service,
		Results:      localRows(sum, stopped),
		Lost:         []string{},
		DeadLetters:  len(sum.DeadLetters),
		Monitor:      sum.Monitor,
		MonitorError: sum.MonitorError,
	}
	for _, r := range sum.Lost() {
		rep.Lost = append(rep.Lost, r.Upload.Key)
	}
	if sum.Simulated {
		rep.CreditsCharged = &sum.CreditsCharged
	}
	return rep
}
