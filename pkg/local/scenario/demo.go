package scenario

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/dashpage"
	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
	"github.com/geolocate-aws/geolocate/pkg/local/pipeline"
)

// DemoOptions configure WriteDemoDashboard.
type DemoOptions struct {
	// Template is the synthesized stack template, StackName its stack's
	// name (cdk.json's stackName).
	Template  []byte
	StackName string
	// S3 and Bucket, DynamoDB and Table are the local parts, the bucket
	// and the table created, as for New.
	S3       *s3.Client
	Bucket   string
	DynamoDB *dynamodb.Client
	Table    string
	// Start is the day's midnight (UTC); default yesterday's.
	Start time.Time
	// Day is how much of the day is played; default 24 hours.
	Day time.Duration
	// Progress receives a line every six simulated hours (default: none).
	Progress io.Writer
}

// demoCredits is the demo account's allowance: the day's 800-odd photos
// with weeks to spare, so the credit forecast reads as a healthy
// account's rather than firing CreditsRunningOut.
const demoCredits = 25_000

// WriteDemoDashboard draws the stack's dashboard from a simulated busy
// day (BusyDay) into the HTML file path: the template deployed on the rig,
// the real functions on a simulated clock, the day played in seconds. A
// local run of half a minute is one point per metric; this is what the
// dashboard looks like in operation, an incident included.
func WriteDemoDashboard(ctx context.Context, path string, opts DemoOptions) error {
	if opts.Start.IsZero() {
		opts.Start = time.Now().UTC().Truncate(24 * time.Hour).Add(-24 * time.Hour)
	}
	if opts.Day <= 0 {
		opts.Day = 24 * time.Hour
	}
	if opts.Progress == nil {
		opts.Progress = io.Discard
	}
	rig, err := New(Options{
		Template: opts.Template, StackName: opts.StackName, Start: opts.Start,
		S3: opts.S3, Bucket: opts.Bucket, DynamoDB: opts.DynamoDB, Table: opts.Table,
		Simulator: []func(*geosim.Config){func(c *geosim.Config) { c.Allowance = demoCredits }},
		// A third of the photos with a position, as from phones: the
		// accuracy widgets then have something to show.
		GPSEvery: 3,
	})
	if err != nil {
		return fmt.Errorf("deploy the template on the local rig: %w", err)
	}
	defer rig.Close()
	fmt.Fprintf(opts.Progress, "playing   %s, on a simulated clock\n", BusyDay)
	err = rig.PlayBusyDay(ctx, opts.Day, func(now time.Time) {
		if now.Hour()%6 == 0 && now.After(opts.Start) {
			fmt.Fprintf(opts.Progress, "simulated %s, %d uploads so far\n", now.Format("15:04"), rig.Uploads())
		}
	})
	if err != nil {
		return err
	}
	records, err := ledger.New(opts.DynamoDB, opts.Table).Query(ctx, ledger.QueryInput{Since: opts.Start, Until: rig.Now()})
	if err != nil {
		return fmt.Errorf("read the day's records: %w", err)
	}
	rig.PublishResultEvents(records)
	return dashpage.WriteFile(path, dashpage.Source{
		Template: opts.Template, Metrics: rig.Store, Alarms: rig.Eval, From: opts.Start, To: rig.Now(),
		Description: fmt.Sprintf("Drawn from %s (%d uploads, %d alarm notifications)", BusyDay, rig.Uploads(), len(rig.Notifications())),
	}, func(o *dashpage.Options) {
		o.Refs = map[string]string{"AWS::StackName": opts.StackName, "AWS::Region": "local"}
		o.CustomWidget = pipeline.MapWidget(records)
	})
}
