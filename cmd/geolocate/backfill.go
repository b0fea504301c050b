package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/geolocate-aws/geolocate/pkg/jobs"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/predictor"
	"github.com/geolocate-aws/geolocate/pkg/shared/s3event"
	"github.com/geolocate-aws/geolocate/pkg/shared/settings"
)

// runBackfill: geolocate backfill --bucket B [--prefix P]
// [--requeue-unknown] [--dry-run [--count-reuse]] [--follow] [--stack NAME]
// [--table T] [--rate R].
//
// It creates a backfill job in the stack (pkg/jobs) and returns within
// seconds: the job lists the bucket and feeds the upload queue in the
// account, at the stack's rate less the room uploads need, keeping at most
// jobWindowMinutes of calls in the queue, so no message of it can expire
// or dead-letter for the job's size and no terminal has to stay open.
// Each object is sent as the notification S3 would have sent for it; the
// predictor claims each object version before calling the service, so
// objects processed before cost nothing, and the listing leaves out those
// with a final record.
//
// --dry-run lists here and sends nothing: what would be sent, and with
// --count-reuse how many answers would be reused. Objects are listed with
// ListObjectVersions (latest versions only) rather than ListObjectsV2,
// because only the former reports version ids: a notification without one
// would name the object by its ETag, a different record from the one its
// original upload created, and pay for it twice (the job's listing does
// the same).
func runBackfill(ctx context.Context, c *cli, args []string) error {
	fs := c.newFlagSet("backfill", "")
	var (
		bucket  = fs.String("bucket", "", "bucket whose objects to send (default: the stack's "+outputBucketName+" output)")
		prefix  = fs.String("prefix", "", "only objects whose key starts with this prefix")
		dryRun  = fs.Bool("dry-run", false, "list here what would be sent, send nothing and create no job")
		follow  = fs.Bool("follow", false, "after creating the job, print its progress until it is done (Ctrl-C stops watching, not the job)")
		requeue = fs.Bool("requeue-unknown", false, "also send objects recorded as failed/"+ledger.ErrorCodeOutcomeUnknown+
			" (their answer was lost after the upload; the service may have charged once already)")
		countReuse = fs.Bool("count-reuse", false, "with --dry-run: read every object that would be sent to count those whose answer would be reused (same bytes) and the credits saved")
		meta       = uploadMetadataFlag(fs, predictor.UploadMetadataStrip, " (for --count-reuse: the stack's uploadMetadata)")
		rate       = fs.Float64("rate", 0, "calls per minute the stack makes (its "+settings.RatePerMinute.Key+"); default: read from the stack's predictor")
		d          doctor
	)
	refuseJobFlags(fs)
	loc := &d.loc
	loc.register(fs, true)
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	if err := refusedJobFlag(fs); err != nil {
		return err
	}
	if flagGiven(fs, "rate") && *rate <= 0 {
		return usageError{errors.New("--rate takes the stack's calls a minute (> 0)")}
	}
	if *countReuse && !*dryRun {
		return usageError{errors.New("--count-reuse goes with --dry-run")}
	}
	if *follow && *dryRun {
		return usageError{errors.New("--follow watches a job; --dry-run creates none")}
	}
	clients, err := loadAWS(ctx)
	if err != nil {
		return err
	}
	d.c, d.clients = c, clients
	if *bucket == "" {
		if *bucket, err = loc.output(ctx, clients, outputBucketName); err != nil {
			return fmt.Errorf("no --bucket: %w", err)
		}
	}
	table, tableErr := loc.table(ctx, c, clients)
	if !*dryRun {
		// The job lives in the results table.
		if tableErr != nil {
			return tableErr
		}
		js := jobs.New(clients.tables, table)
		spec := jobs.Spec{Kind: jobs.KindBackfill, Bucket: *bucket, Prefix: *prefix, Requeue: *requeue}
		active, err := activeJob(ctx, js, func(j jobs.Job) bool {
			return j.Kind == spec.Kind && j.Bucket == spec.Bucket && j.Prefix == spec.Prefix && j.Requeue == spec.Requeue
		})
		if err != nil {
			return err
		}
		if active != nil {
			// A second job would list and feed the same objects again.
			fmt.Fprintf(c.stdout, "job %s already backfills %s (%s): it goes on; geolocate jobs show %s\n", active.ID, what(*active), active.State, active.ID)
			if !*follow {
				return nil
			}
			return followJob(ctx, c, js, active.ID)
		}
		stack := readStackPredictor(ctx, c, &d, *rate, flagGiven(fs, "rate"))
		if err := stack.refuses(*bucket); err != nil {
			return err
		}
		spec.Price, spec.RatePerMinute = stack.price, stack.rate
		return startJob(ctx, c, clients, loc, js, spec, *follow)
	}

	// The dry run: the table is optional; without it every object counts
	// as one to send (the predictor would skip the finished ones itself).
	var store *ledger.Store
	if tableErr == nil {
		store = ledger.New(clients.tables, table)
	} else {
		fmt.Fprintf(c.stderr, "backfill: results table unknown (%v); counting every object, the predictor would skip finished ones\n", tableErr)
	}
	if *requeue && store == nil {
		return errors.New("--requeue-unknown needs the results table (--table or --stack)")
	}
	b := &backfill{c: c, clients: clients, store: store, bucket: *bucket, requeueUnknown: *requeue}
	if *countReuse {
		mode, err := meta.check(false)
		if err != nil {
			return err
		}
		b.reuse = &reuseCount{uploadMetadata: mode, seen: map[string]int{}}
	}
	err = b.run(ctx, *prefix)
	reopened := ""
	if *requeue {
		reopened = fmt.Sprintf(" (%d to reopen)", b.reopened)
	}
	fmt.Fprintf(c.stderr, "backfill: %d listed, would send %d%s, %d already processed\n", b.listed, b.sent, reopened, b.skipped)
	if b.reuse != nil && err == nil {
		fmt.Fprint(c.stderr, b.reuse.summary())
	}
	return err
}

// backfill is a dry run's listing: what the job would send.
type backfill struct {
	c       *cli
	clients *awsClients
	store   *ledger.Store
	bucket  string
	// requeueUnknown counts outcome_unknown records as ones to send (the
	// job would reopen them).
	requeueUnknown bool
	// reuse counts reused answers ahead (--count-reuse); nil otherwise.
	reuse *reuseCount

	listed, sent, skipped, reopened int
}

func (b *backfill) run(ctx context.Context, prefix string) error {
	in := &s3.ListObjectVersionsInput{Bucket: aws.String(b.bucket)}
	if prefix != "" {
		in.Prefix = aws.String(prefix)
	}
	pages := s3.NewListObjectVersionsPaginator(b.clients.objects, in)
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("list s3://%s/%s: %w", b.bucket, prefix, err)
		}
		for _, v := range page.Versions {
			if !aws.ToBool(v.IsLatest) {
				continue // older versions were superseded; deleted objects have a delete marker as latest
			}
			b.listed++
			if err := b.add(ctx, v.Key, v.VersionId, v.ETag, v.Size); err != nil {
				return err
			}
		}
		fmt.Fprintf(b.c.stderr, "backfill: %d listed, would send %d, %d already processed\n", b.listed, b.sent, b.skipped)
	}
	return nil
}

// add counts one object as one to send, unless its record is final.
func (b *backfill) add(ctx context.Context, key, versionID, etag *string, size *int64) error {
	obj := s3event.ObjectCreated{
		Bucket:    b.bucket,
		Key:       aws.ToString(key),
		Size:      aws.ToInt64(size),
		ETag:      aws.ToString(etag),
		VersionID: aws.ToString(versionID),
		EventName: "ObjectCreated:Put",
	}
	if obj.VersionID == "null" {
		obj.VersionID = "" // unversioned bucket: S3's own notifications carry none
	}
	if b.store != nil {
		rec, err := b.store.Lookup(ctx, ledger.ObjectRef{Bucket: obj.Bucket, Key: obj.Key, VersionID: obj.VersionID, ETag: obj.ETag})
		if err != nil {
			return fmt.Errorf("look up %s: %w", obj.Key, err)
		}
		if rec != nil && rec.Final() {
			if !b.requeueUnknown || rec.Status != ledger.StatusFailed || rec.ErrorCode != ledger.ErrorCodeOutcomeUnknown {
				b.skipped++
				return nil
			}
			b.reopened++
		}
	}
	if b.reuse != nil {
		if err := b.reuse.count(ctx, b.clients.objects, b.store, obj); err != nil {
			return err
		}
	}
	b.sent++
	return nil
}
