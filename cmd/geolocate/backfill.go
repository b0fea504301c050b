package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/predictor"
	"github.com/geolocate-aws/geolocate/pkg/shared/s3event"
)

// sqsBatchMax is SendMessageBatch's limit on entries per call.
const sqsBatchMax = 10

// runBackfill: geolocate backfill --bucket B [--prefix P] [--queue-url U |
// --stack NAME] [--table T] [--dry-run [--count-reuse]].
//
// It sends existing objects through the pipeline as the notifications S3
// would have sent for them. It is idempotent: the predictor claims each
// object version before calling the service and skips versions it already
// finished, so objects processed before cost nothing. When the results
// table is known, objects with a final record are not even sent.
//
// Objects are listed with ListObjectVersions (latest versions only) rather
// than ListObjectsV2, because only the former reports version ids: a
// notification without one would name the object by its ETag, a different
// record from the one its original upload created, and pay for it twice.
func runBackfill(ctx context.Context, c *cli, args []string) error {
	fs := c.newFlagSet("backfill", "")
	var (
		bucket   = fs.String("bucket", "", "bucket whose objects to send (default: the stack's "+outputBucketName+" output)")
		prefix   = fs.String("prefix", "", "only objects whose key starts with this prefix")
		queueURL = fs.String("queue-url", "", "queue to send to (default: the stack's "+outputQueueURL+" output)")
		dryRun   = fs.Bool("dry-run", false, "list what would be sent, send nothing")
		requeue  = fs.Bool("requeue-unknown", false, "also send objects recorded as failed/"+ledger.ErrorCodeOutcomeUnknown+
			" (their answer was lost after the upload; the service may have charged once already)")
		countReuse = fs.Bool("count-reuse", false, "with --dry-run: read every object that would be sent to count those whose answer would be reused (same bytes) and the credits saved")
		meta       = uploadMetadataFlag(fs, predictor.UploadMetadataStrip, " (for --count-reuse: the stack's uploadMetadata)")
		loc        stackLocator
	)
	loc.register(fs, true)
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	clients, err := loadAWS(ctx)
	if err != nil {
		return err
	}
	if *bucket == "" {
		if *bucket, err = loc.output(ctx, clients, outputBucketName); err != nil {
			return fmt.Errorf("no --bucket: %w", err)
		}
	}
	if *queueURL == "" && !*dryRun {
		if *queueURL, err = loc.output(ctx, clients, outputQueueURL); err != nil {
			return fmt.Errorf("no --queue-url: %w", err)
		}
	}
	// The table is optional: without it every object is sent and the
	// predictor skips the finished ones itself.
	var store *ledger.Store
	if table, err := loc.table(ctx, c, clients); err == nil {
		store = ledger.New(clients.tables, table)
	} else {
		fmt.Fprintf(c.stderr, "backfill: results table unknown (%v); sending every object, the predictor skips finished ones\n", err)
	}

	if *requeue && store == nil {
		return errors.New("--requeue-unknown needs the results table (--table or --stack)")
	}
	b := &backfill{c: c, clients: clients, store: store, bucket: *bucket, queueURL: *queueURL, dryRun: *dryRun, requeueUnknown: *requeue}
	if *countReuse {
		mode, err := meta.check(false)
		if err != nil {
			return err
		}
		if !*dryRun {
			return usageError{errors.New("--count-reuse goes with --dry-run")}
		}
		b.reuse = &reuseCount{uploadMetadata: mode, seen: map[string]int{}}
	}
	err = b.run(ctx, *prefix)
	verb := "sent"
	if *dryRun {
		verb = "would send"
	}
	reopened := ""
	if *requeue {
		reopened = fmt.Sprintf(" (%d reopened)", b.reopened)
	}
	fmt.Fprintf(c.stderr, "backfill: %d listed, %s %d%s, %d already processed\n", b.listed, verb, b.sent, reopened, b.skipped)
	if b.reuse != nil && err == nil {
		fmt.Fprint(c.stderr, b.reuse.summary())
	}
	return err
}

type backfill struct {
	c        *cli
	clients  *awsClients
	store    *ledger.Store
	bucket   string
	queueURL string
	dryRun   bool
	// requeueUnknown reopens outcome_unknown records so they are called again.
	requeueUnknown bool
	// reuse counts reused answers ahead (--count-reuse); nil otherwise.
	reuse *reuseCount

	pending                         []sqstypes.SendMessageBatchRequestEntry
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
		if err := b.flush(ctx); err != nil {
			return err
		}
		fmt.Fprintf(b.c.stderr, "backfill: %d listed, %d sent, %d already processed\n", b.listed, b.sent, b.skipped)
	}
	return b.flush(ctx)
}

// add queues one object's notification, unless its record is final.
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
			if !b.reopen(ctx, rec) {
				b.skipped++
				return nil
			}
		}
	}
	if b.reuse != nil {
		if err := b.reuse.count(ctx, b.clients.objects, b.store, obj); err != nil {
			return err
		}
	}
	body, err := s3event.Body(obj)
	if err != nil {
		return err
	}
	b.pending = append(b.pending, sqstypes.SendMessageBatchRequestEntry{
		Id:          aws.String(strconv.Itoa(len(b.pending))),
		MessageBody: aws.String(body),
	})
	if len(b.pending) == sqsBatchMax {
		return b.flush(ctx)
	}
	return nil
}

// reopen makes an outcome_unknown record claimable again when the operator
// asked for it (not in a dry run), and reports whether the object should be sent.
func (b *backfill) reopen(ctx context.Context, rec *ledger.Record) bool {
	if !b.requeueUnknown || rec.Status != ledger.StatusFailed || rec.ErrorCode != ledger.ErrorCodeOutcomeUnknown {
		return false
	}
	if !b.dryRun {
		ref := ledger.ObjectRef{Bucket: rec.Bucket, Key: rec.Key, VersionID: rec.VersionID, ETag: rec.ETag}
		if err := b.store.Reopen(ctx, ref, ledger.ErrorCodeOutcomeUnknown); err != nil {
			fmt.Fprintf(b.c.stderr, "backfill: %s not requeued: %v\n", rec.Key, err)
			return false
		}
	}
	b.reopened++
	return true
}

// flush sends the pending entries (see send).
func (b *backfill) flush(ctx context.Context) error {
	if len(b.pending) == 0 {
		return nil
	}
	entries := b.pending
	b.pending = nil
	if b.dryRun {
		b.sent += len(entries)
		return nil
	}
	return b.send(ctx, entries)
}

// send sends entries in one SendMessageBatch, retrying the entries SQS
// failed once (a batch can partly fail).
func (b *backfill) send(ctx context.Context, entries []sqstypes.SendMessageBatchRequestEntry) error {
	for attempt := 1; ; attempt++ {
		out, err := b.clients.queues.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{
			QueueUrl: aws.String(b.queueURL),
			Entries:  entries,
		})
		if err != nil {
			return fmt.Errorf("send to %s: %w", b.queueURL, err)
		}
		b.sent += len(out.Successful)
		if len(out.Failed) == 0 {
			return nil
		}
		failed := make(map[string]bool, len(out.Failed))
		var reasons []string
		for _, f := range out.Failed {
			failed[aws.ToString(f.Id)] = true
			reasons = append(reasons, aws.ToString(f.Code)+": "+aws.ToString(f.Message))
		}
		if attempt == 2 {
			return fmt.Errorf("send to %s: %d message(s) refused: %s", b.queueURL, len(out.Failed), strings.Join(reasons, "; "))
		}
		var retry []sqstypes.SendMessageBatchRequestEntry
		for _, e := range entries {
			if failed[aws.ToString(e.Id)] {
				retry = append(retry, e)
			}
		}
		entries = retry
	}
}
