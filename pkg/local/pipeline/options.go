package pipeline

import (
	"io"
	"os"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/alarmeval"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts"
	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
	"github.com/geolocate-aws/geolocate/pkg/local/pipes"
	"github.com/geolocate-aws/geolocate/pkg/shared/settings"
)

// Defaults of the local parts. The event source's and the queue's are the
// stack's own, from the settings table (setDefaults), so a local run
// behaves like a deployed one.
const (
	DefaultBucket        = "geolocate-local-uploads"
	DefaultTable         = "geolocate-local-results"
	DefaultRetryDelay    = time.Second
	DefaultWatchInterval = time.Second

	// simulatorRatePerMinute lifts the predictor's rate limit when it talks
	// to the in-process simulator, which has no limit of its own: the
	// deployed default (60 a minute) would make the demo crawl.
	simulatorRatePerMinute = "6000"
)

// Options configure Run. The zero value runs the sample images of the
// working directory's testdata/images against the simulator.
type Options struct {
	// ImagesDir holds the files to upload: the regular, non-hidden files in
	// it and in its folders, hidden folders and symbolic links excluded.
	// Default "testdata/images".
	ImagesDir string
	// KeyPrefix is prepended to each file's path below ImagesDir (with
	// forward slashes) to form its object key.
	KeyPrefix string

	// Watch keeps running after the first pass: files that appear in
	// ImagesDir (or change) are uploaded and processed until ctx is done.
	Watch bool
	// WatchInterval is how often ImagesDir is scanned. Default 1s.
	WatchInterval time.Duration

	// Profile is the simulator's profile: geosim.ProfileContract (the
	// default) or geosim.ProfileBackend, the service's public backend (its
	// credit summary and model list refuse API keys, its own key header,
	// 30 predictions a minute). Unused with an external service.
	Profile geosim.Profile

	// External, if set, is the service the functions call instead of the
	// simulator the run starts: paid calls. Only the caller chooses it;
	// GEO_API_URL and GEO_API_KEY in the environment are never read.
	External *ExternalService

	// Getenv reads the optional predictor settings (GEO_MODEL_ID,
	// GEO_TOP_N, ...). Default os.Getenv.
	Getenv func(string) string

	// Bucket and Table name the local bucket and table.
	Bucket string
	Table  string
	// Unversioned creates the bucket with versioning never enabled, S3's
	// default and how a user's existing bucket may be: uploads then get no
	// version id, their notifications carry no versionId, an overwrite
	// replaces the object, and records are keyed by ETag ("V#<etag>"). The
	// default (false) is a versioned bucket, as the stack creates its own:
	// records are keyed by version id ("V#<version id>").
	Unversioned bool

	// Notifications is how uploads reach the queue, as the stack's
	// notifications setting: NotificationsS3 (default) puts S3's event
	// notification on the queue, NotificationsEventBridge the EventBridge
	// event the stack's uploads rule sends.
	Notifications string

	// Backfill puts the files in the bucket unannounced, as objects that
	// were there before the pipeline, and processes them with a backfill
	// job over the bucket (KeyPrefix), created as geolocate backfill
	// creates it: the job feeder lists them and feeds the queue on its
	// schedule (JobSchedule), at the job's rate within jobWindowMinutes.
	// Watch mode announces the files it finds later as uploads.
	Backfill bool
	// Reprocess, if set, is a reprocess run started once every upload has
	// settled, as geolocate reprocess starts one: the run's item with its
	// cap, then a job the feeder selects from the table and feeds.
	Reprocess *Reprocess

	// DynamoDB, if set, is used instead of starting a DynamoDB Local (tests
	// share one); Run then creates Table in it and does not stop it.
	DynamoDB *awsparts.DynamoDB

	// The event source mapping: batch size, concurrent instances, and the
	// function timeout (the queue's visibility timeout is six times it, as
	// in the stack). MaxReceiveCount is the redrive policy.
	BatchSize       int
	Concurrency     int
	FunctionTimeout time.Duration
	MaxReceiveCount int
	// RetryDelay is how soon a message the predictor returned becomes
	// visible again (in AWS: the visibility timeout). Default 1s.
	RetryDelay time.Duration
	// DuplicateRate makes the queue deliver some messages twice, as SQS
	// may; the pipeline must not care.
	DuplicateRate float64

	// Progress receives human-readable progress lines. Default: discarded.
	Progress io.Writer
	// OnResult, if set, is called once for each upload when it settles
	// (final record or dead letter), from a background goroutine.
	OnResult func(Result)
	// FunctionLogs receives the functions' JSON logs and Embedded Metric
	// Format lines. Default: discarded.
	FunctionLogs io.Writer
	// Events, if set, is the stack's results pipe (pipes.ResultsPipe): the
	// run reads its table's stream and plays the pipe over each record, as
	// the deployed pipe would, printing each event it would publish and
	// passing it to OnEvent (from a background goroutine, one at a time).
	Events  *pipes.Pipe
	OnEvent func(*pipes.Event)

	// Metrics, if set, receives the metrics of the functions' Embedded
	// Metric Format lines (Store.AddEMF), as CloudWatch would extract them,
	// for the local alarm evaluation and the dashboard page. Other local
	// emitters (the queue's and Lambda's own metrics) add theirs to the
	// same store with Store.Add.
	Metrics *alarmeval.Store
}

// Reprocess is a run to start once the uploads have settled.
type Reprocess struct {
	// Run names the run; ModelID is the model it asks ("" the default).
	Run, ModelID string
	// Selection is the run's selection as geolocate reprocess stores it
	// (jobs.Selection's text); empty: every succeeded record of the day.
	Selection string
	// Price is the credits a call costs, Cap the most the run may spend.
	Price, Cap int
}

func (o *Options) setDefaults() {
	if o.ImagesDir == "" {
		o.ImagesDir = "testdata/images"
	}
	if o.WatchInterval <= 0 {
		o.WatchInterval = DefaultWatchInterval
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Bucket == "" {
		o.Bucket = DefaultBucket
	}
	if o.Table == "" {
		o.Table = DefaultTable
	}
	if o.Notifications == "" {
		o.Notifications = NotificationsS3
	}
	if o.BatchSize <= 0 {
		o.BatchSize = settings.BatchSize.DefaultInt()
	}
	if o.Concurrency <= 0 {
		o.Concurrency = settings.MaxConcurrency.DefaultInt()
	}
	if o.FunctionTimeout <= 0 {
		o.FunctionTimeout = time.Duration(settings.PredictorTimeoutSeconds.DefaultInt()) * time.Second
	}
	if o.MaxReceiveCount <= 0 {
		o.MaxReceiveCount = settings.DLQMaxReceiveCount.DefaultInt()
	}
	if o.RetryDelay <= 0 {
		o.RetryDelay = DefaultRetryDelay
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.FunctionLogs == nil {
		o.FunctionLogs = io.Discard
	}
	if o.Metrics != nil {
		o.FunctionLogs = io.MultiWriter(o.FunctionLogs, emfStore(o.Metrics, o.Progress))
	}
}
