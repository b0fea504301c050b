package scenario

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http/httptest"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/geolocate-aws/geolocate/pkg/geoapi"
	"github.com/geolocate-aws/geolocate/pkg/jobs"
	"github.com/geolocate-aws/geolocate/pkg/lambdarun"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/alarmeval"
	"github.com/geolocate-aws/geolocate/pkg/local/awsmetrics"
	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
	"github.com/geolocate-aws/geolocate/pkg/local/simclock"
	"github.com/geolocate-aws/geolocate/pkg/local/sqsqueue"
	"github.com/geolocate-aws/geolocate/pkg/monitor"
	"github.com/geolocate-aws/geolocate/pkg/pacer"
	"github.com/geolocate-aws/geolocate/pkg/predictor"
	"github.com/geolocate-aws/geolocate/pkg/secretkey"
	"github.com/geolocate-aws/geolocate/pkg/secretkey/secretkeytest"
	"github.com/geolocate-aws/geolocate/pkg/shared/configrules"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
	"github.com/geolocate-aws/geolocate/pkg/shared/resultevents"
)

// simulatedRatePerMinute replaces the stack's ratePerMinute. Simulated time
// stands still while an invocation runs, so the pacer's spacing would be
// slept in real time: at the deployed 30 per minute a busy day would take
// hours. The simulator's limit is raised to match; pacing has its own tests
// and benchmark. It is the highest rate the shared pacer's one schedule
// item carries, which the predictor refuses to exceed.
var simulatedRatePerMinute = strconv.Itoa(configrules.MaxRatePerMinute)

// Options configure a Rig.
type Options struct {
	// Template is the synthesized stack template (JSON).
	Template []byte
	// StackName resolves the template's AWS::StackName (alarm names).
	StackName string
	// Start is when the stack is deployed: the clock's first reading.
	Start time.Time

	// S3 and Bucket, DynamoDB and Table are the local AWS parts (gofakes3,
	// DynamoDB Local) with the bucket and the results table created.
	S3       *s3.Client
	Bucket   string
	DynamoDB *dynamodb.Client
	Table    string

	// PredictorEnv and MonitorEnv override the functions' environment after
	// the template's and the rig's own settings (a scenario's bad
	// configuration, a pinned model).
	PredictorEnv, MonitorEnv map[string]string
	// Key is the value of the API key secret at deployment; default the
	// simulator's demo key. A new stack's secret holds a placeholder.
	Key string
	// Simulator adjusts the service simulator.
	Simulator []func(*geosim.Config)
	// GPSEvery makes every GPSEvery-th photo carry an EXIF GPS position,
	// as phones write it (0: none), so the accuracy metrics have data.
	GPSEvery int
	// Logs receives the functions' log lines (default: discarded).
	Logs io.Writer
}

// Rig is the pipeline deployed from a template, run on a simulated clock:
// uploads, the queue with its redrive policy, the predictor and the monitor
// (the real handlers, configured from the template's environment), the
// service simulator, and CloudWatch's alarms evaluated over what all of
// them publish.
type Rig struct {
	opts  Options
	stack *Stack
	clock *simclock.Clock

	Sim   *geosim.Server
	simTS *httptest.Server
	Store *alarmeval.Store
	Eval  *alarmeval.Evaluator

	queue   *sqsqueue.Queue
	poller  *sqsqueue.Poller
	monitor *monitor.Monitor
	// predictorInit and monitorInit are the functions' init errors (bad
	// configuration): every invocation then fails, as on Lambda.
	predictorInit, monitorInit error

	metrics *alarmeval.EMFWriter
	// emfErrs are the malformed EMF records since the last minute.
	emfErrs []error
	aws     *awsmetrics.Publisher
	// secret is the API key secret, read by both functions through the
	// real cached provider, as in the stack.
	secret *secretkeytest.SecretsManager

	// Throttled makes every predictor invocation throttled, as when the
	// account's concurrency is used up by other functions.
	Throttled bool
	// MonitorBroken makes every monitor invocation fail (crash, timeout,
	// missing permission).
	MonitorBroken bool

	nextMonitor time.Time
	// monitorBuilt and secretPut model the monitor's secret cache, whose
	// expiry runs on the wall clock inside the caching library.
	monitorBuilt, secretPut time.Time
	uploads                 int
	notifications           []alarmeval.Notification
}

// New deploys the template on the rig at opts.Start.
func New(opts Options) (*Rig, error) {
	stack, err := ReadStack(opts.Template)
	if err != nil {
		return nil, err
	}
	alarms, err := alarmeval.ParseTemplate(opts.Template, func(o *alarmeval.ParseOptions) {
		o.Refs = map[string]string{"AWS::StackName": opts.StackName}
	})
	if err != nil {
		return nil, err
	}
	if opts.Logs == nil {
		opts.Logs = io.Discard
	}
	r := &Rig{opts: opts, stack: stack, clock: simclock.New(opts.Start), Store: alarmeval.NewStore()}
	r.Eval, err = alarmeval.NewEvaluator(r.Store, alarms)
	if err != nil {
		return nil, err
	}
	r.metrics = &alarmeval.EMFWriter{Store: r.Store, Now: r.clock.Now, OnError: func(err error) { r.emfErrs = append(r.emfErrs, err) }}
	r.aws = &awsmetrics.Publisher{Store: r.Store, Names: stack.Names}

	r.Sim = geosim.New(append([]func(*geosim.Config){
		geosim.WithClock(r.clock.Now),
		geosim.WithRateLimit(1_000_000, 10_000),
	}, opts.Simulator...)...)
	r.simTS = httptest.NewServer(r.Sim)
	if r.opts.Key == "" {
		r.opts.Key = r.Sim.DemoKey()
	}
	r.secret = secretkeytest.New("", r.opts.Key)

	r.queue, err = sqsqueue.Create(
		sqsqueue.WithClock(r.clock.Now),
		sqsqueue.WithVisibilityTimeout(stack.VisibilityTimeout),
		sqsqueue.WithMaxReceiveCount(stack.MaxReceiveCount),
		sqsqueue.WithMessageRetentionPeriod(stack.QueueRetention),
		sqsqueue.WithDeadLetterRetentionPeriod(stack.DeadLetterRetention),
	)
	if err != nil {
		return nil, fmt.Errorf("upload queue as the template configures it: %w", err)
	}
	r.poller = &sqsqueue.Poller{
		Queue:     r.queue,
		Handler:   r.predictorHandler(),
		BatchSize: stack.BatchSize,
		Timeout:   stack.PredictorTimeout,
	}
	r.monitor, r.monitorInit = r.newMonitor()
	r.monitorBuilt = opts.Start
	r.nextMonitor = opts.Start.Add(stack.MonitorSchedule)
	return r, nil
}

// Close stops the simulator's server.
func (r *Rig) Close() { r.simTS.Close() }

// Now is the simulated time.
func (r *Rig) Now() time.Time { return r.clock.Now() }

// Stack is what the rig read from the template.
func (r *Rig) Stack() *Stack { return r.stack }

// Queue is the upload queue.
func (r *Rig) Queue() *sqsqueue.Queue { return r.queue }

// PublishResultEvents publishes the result events of records as the
// results pipe and the counting rules would: one event per record that
// became final, at its last update. The rig does not read the table's
// stream, so a record that became final twice (a redrive, a retry that
// succeeded after a final failure) counts once.
func (r *Rig) PublishResultEvents(records []ledger.Record) { publishResultEvents(r.aws, records) }

func publishResultEvents(p *awsmetrics.Publisher, records []ledger.Record) {
	for i := range records {
		if rec := &records[i]; rec.Final() {
			p.ResultEvent(rec.UpdatedAt, resultevents.DetailType(rec.Status))
		}
	}
}

// Notifications are the alarm notifications sent so far, in time order.
func (r *Rig) Notifications() []alarmeval.Notification { return r.notifications }

// Run advances the clock minute by minute for d. Each minute, every starts
// it (uploads, faults switched on or off), then the scheduled monitor runs
// if due, the event source mapping drains what the queue holds, AWS
// publishes the queue's and the functions' metrics, and CloudWatch
// evaluates the alarms.
func (r *Rig) Run(ctx context.Context, d time.Duration, every func(now time.Time)) error {
	end := r.Now().Add(d)
	for r.Now().Before(end) {
		if err := ctx.Err(); err != nil {
			return err
		}
		now := r.Now()
		if every != nil {
			every(now)
		}
		if !now.Before(r.nextMonitor) {
			r.runMonitor(ctx)
			r.nextMonitor = r.nextMonitor.Add(r.stack.MonitorSchedule)
		}
		if err := r.drain(ctx); err != nil {
			return err
		}
		if err := r.aws.Queue(now, r.queue.Metrics()); err != nil {
			return err
		}
		if err := errors.Join(r.emfErrs...); err != nil {
			return fmt.Errorf("the functions published malformed metrics: %w", err)
		}
		sent, err := r.Eval.Evaluate(now)
		if err != nil {
			return err
		}
		r.notifications = append(r.notifications, sent...)
		r.clock.Advance(time.Minute)
	}
	return nil
}

// maxBatchesPerMinute bounds one minute's invocations, so a handler that
// keeps making its own messages visible again cannot spin the rig.
const maxBatchesPerMinute = 10_000

// drain plays the event source mapping for one minute: it invokes the
// predictor with batches until no message is visible. Throttled, each of
// the mapping's concurrent pollers gets one batch and is refused: the
// messages stay in flight until their visibility timeout, their receive
// count raised, as on SQS.
func (r *Rig) drain(ctx context.Context) error {
	now := r.Now()
	if r.Throttled {
		for range max(r.stack.MaxConcurrency, 1) {
			if len(r.queue.Receive(ctx, r.stack.BatchSize, 0)) == 0 {
				break
			}
			r.aws.Invocation(now, r.stack.Names.Predictor, 0, false, true)
		}
		return nil
	}
	for range maxBatchesPerMinute {
		res, ok := r.poller.Poll(ctx)
		if !ok {
			return nil
		}
		r.aws.Invocation(now, r.stack.Names.Predictor, res.Duration, res.Err != nil, false)
	}
	return fmt.Errorf("more than %d batches in one minute: messages keep coming back at once", maxBatchesPerMinute)
}

// runMonitor is one scheduled run: EventBridge invokes the monitor
// (AWS/Events Invocations), which reads the service and publishes its
// metrics.
func (r *Rig) runMonitor(ctx context.Context) {
	now := r.Now()
	// The caching library expires entries on the wall clock, which barely
	// moves here: a warm monitor sees a new secret value once the cache's
	// TTL has passed in simulated time, as it would on Lambda.
	if r.secretPut.After(r.monitorBuilt) && now.Sub(r.secretPut) >= secretCacheTTL {
		r.monitor, r.monitorInit = r.newMonitor()
		r.monitorBuilt = now
	}
	r.aws.RuleInvoked(now)
	start := time.Now()
	failed := r.MonitorBroken || r.monitorInit != nil
	if !failed {
		payload := scheduledEvent(now)
		if _, err := lambdarun.Invoke(ctx, r.monitor.Handle, payload, r.stack.MonitorTimeout); err != nil {
			failed = true
		}
	}
	r.aws.Invocation(now, r.stack.Names.Monitor, time.Since(start), failed, false)
}

// PutSecret stores a new value of the API key secret, as an operator does
// with put-secret-value; the functions see it when their cache refreshes.
func (r *Rig) PutSecret(value string) {
	r.secret.Rotate(value)
	r.secretPut = r.Now()
}

// secretCacheTTL is how long the functions' key provider serves its cached
// value (secretkey's default TTL).
const secretCacheTTL = 5 * time.Minute

// functionEnv is a function's environment as deployed, pointed at the local
// parts: the table, the bucket and the simulator. The secret id stays: the
// functions read the key from the rig's Secrets Manager.
func (r *Rig) functionEnv(deployed, overrides map[string]string) map[string]string {
	env := maps.Clone(deployed)
	for name, v := range map[string]string{
		envvars.TableName: r.opts.Table,
		envvars.APIURL:    r.simTS.URL,
	} {
		env[name] = v
	}
	if _, ok := env[envvars.BucketName]; ok {
		env[envvars.BucketName] = r.opts.Bucket
	}
	if _, ok := env[envvars.RatePerMinute]; ok {
		env[envvars.RatePerMinute] = simulatedRatePerMinute
	}
	maps.Copy(env, overrides)
	return env
}

// predictorHandler builds the predictor as its composition root does
// (predictor.Assemble), with every part on the simulated clock; a
// configuration the function would refuse at init makes a handler that
// fails every invocation.
func (r *Rig) predictorHandler() any {
	env := r.functionEnv(r.stack.PredictorEnv, r.opts.PredictorEnv)
	h, err := r.newPredictor(env)
	if err != nil {
		r.predictorInit = err
		return func(context.Context, any) (any, error) {
			return nil, fmt.Errorf("Runtime.InitError: %w", err)
		}
	}
	return h.Handle
}

func (r *Rig) newPredictor(env map[string]string) (*predictor.Handler, error) {
	cfg, err := predictor.LoadConfig(func(name string) string { return env[name] })
	if err != nil {
		return nil, err
	}
	logger := lambdarun.NewLogger(r.opts.Logs, cfg.LogLevel)
	keys, err := r.keys(cfg.SecretID)
	if err != nil {
		return nil, err
	}
	service, err := geoapi.New(cfg.APIURL, func(o *geoapi.Options) { o.Logger = logger })
	if err != nil {
		return nil, err
	}
	pace, err := predictor.NewPacer(cfg, r.opts.DynamoDB, logger, func(o *pacer.Options) { o.Clock = r.clock.Now })
	if err != nil {
		return nil, err
	}
	return predictor.New(cfg, predictor.Deps{
		Pacer:   pace,
		Objects: r.opts.S3,
		Ledger: ledger.New(r.opts.DynamoDB, cfg.TableName, func(o *ledger.Options) {
			o.RecordTTL = cfg.RecordTTL
			o.Clock = r.clock.Now
		}),
		Service:    instantRetries{service},
		Keys:       keys,
		Visibility: sqsqueue.Visibility{Queue: r.queue},
		Logger:     logger,
		Metrics:    r.metrics,
	}, func(o *predictor.Options) {
		// Simulated time stands still while an invocation runs: a wait for
		// a call slot takes none (the simulator's rate is raised), and a
		// slot further than a second away is held while its message waits
		// in the queue, on the simulated clock.
		o.Clock, o.Sleep = r.clock.Now, noSleep
	})
}

func (r *Rig) newMonitor() (*monitor.Monitor, error) {
	env := r.functionEnv(r.stack.MonitorEnv, r.opts.MonitorEnv)
	cfg, err := monitor.LoadConfig(func(name string) string { return env[name] })
	if err != nil {
		return nil, err
	}
	logger := lambdarun.NewLogger(r.opts.Logs, cfg.LogLevel)
	service, err := geoapi.New(cfg.APIURL, func(o *geoapi.Options) {
		o.Logger = logger
		o.Sleep = noSleep
	})
	if err != nil {
		return nil, err
	}
	keys, err := r.keys(cfg.SecretID)
	if err != nil {
		return nil, err
	}
	return monitor.New(cfg, monitor.Options{
		Service: service,
		Keys:    keys,
		History: monitor.NewHistory(r.opts.DynamoDB, cfg.TableName, cfg.PipelineName, cfg.HistoryTTL),
		// The job figures, as monitor.Assemble gives them in the account.
		Jobs:    jobs.New(r.opts.DynamoDB, cfg.TableName),
		Metrics: r.metrics,
		Logger:  logger,
		Clock:   r.clock.Now,
	})
}

// DeclareCredits stores a balance as an operator would with geolocate
// credits --declare: the anchor of the monitor's estimate while the service
// refuses API keys on its credit summary.
func (r *Rig) DeclareCredits(ctx context.Context, credits float64) error {
	h := monitor.NewHistory(r.opts.DynamoDB, r.opts.Table, r.opts.StackName, 0)
	return h.Declare(ctx, monitor.Declared{Remaining: credits, At: r.clock.Now(), By: "scenario"})
}

// keys is a function's cached key provider on the rig's secret, its refresh
// limit on the simulated clock.
func (r *Rig) keys(secretID string) (*secretkey.SecretsManagerProvider, error) {
	return secretkey.NewSecretsManager(r.secret, secretID, func(o *secretkey.SecretsManagerOptions) { o.Clock = r.clock.Now })
}

// instantRetries takes the client's backoff between retries out of real
// time: simulated time does not move during an invocation, so a backoff
// would only slow the rig down.
type instantRetries struct{ predictor.Service }

func (s instantRetries) Predict(ctx context.Context, in *geoapi.PredictInput, optFns ...func(*geoapi.Options)) (*geoapi.PredictOutput, error) {
	return s.Service.Predict(ctx, in, append(optFns, func(o *geoapi.Options) { o.Sleep = noSleep })...)
}

func noSleep(ctx context.Context, _ time.Duration) error { return ctx.Err() }

// Redeploy changes the functions' environment overrides, as a stack update
// with new settings does: both functions start cold with the new
// configuration (a bad one fails every invocation from then on); the queue,
// the table and the alarms stay.
func (r *Rig) Redeploy(predictorEnv, monitorEnv map[string]string) {
	r.opts.PredictorEnv, r.opts.MonitorEnv = predictorEnv, monitorEnv
	r.predictorInit = nil
	r.poller.Handler = r.predictorHandler()
	r.monitor, r.monitorInit = r.newMonitor()
	r.monitorBuilt = r.Now()
}

// PredictorInitError is the predictor's configuration error, if any.
func (r *Rig) PredictorInitError() error { return r.predictorInit }

// Start is when the stack was deployed: the clock's first reading.
func (r *Rig) Start() time.Time { return r.opts.Start }

// Jobs is the job store of the rig's table on its clock, for a scenario to
// create, pause or cancel jobs as the CLI does.
func (r *Rig) Jobs() *jobs.Store {
	return jobs.New(r.opts.DynamoDB, r.opts.Table, func(o *jobs.Options) { o.Clock = r.clock.Now })
}
