package jobs

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/shared/jobmsg"
)

// Feeding bounds.
const (
	// BatchMax is SendMessageBatch's limit on entries per request.
	BatchMax = 10
	// SpreadSeconds is how far ahead a run's messages are spread by
	// DelaySeconds: the schedule's minute, so that they arrive about as
	// the pacer frees slots rather than all at once.
	SpreadSeconds = 60
	// maxCatchUp bounds the minutes of feeding one run makes up for (a
	// schedule delivery missed, a run cut short): more would arrive as a
	// burst the pacer holds.
	maxCatchUp = 2 * time.Minute
	// leaseMargin is how much longer than its budget a run's lease lasts;
	// a run stops sending once its lease is within it of expiring, so
	// that two runs never send from the same position.
	leaseMargin = 15 * time.Second
	// markEvery spaces the sent marks settling reads: at most one per
	// markEvery, so a job's item holds a few dozen whatever its size.
	markEvery = 10 * time.Minute
)

// errLeaseLost marks a job update refused because this run no longer holds
// the job's lease (another run took it over after it expired).
var errLeaseLost = errors.New("the job's lease was lost to another run")

// Position is an object's place in a job's manifest, "<chunk>/<offset>":
// what a job message carries (jobmsg.Object.Pos) and the retry and dropped
// lists hold.
func Position(chunk, offset int) string { return strconv.Itoa(chunk) + "/" + strconv.Itoa(offset) }

func parsePosition(p string) (chunk, offset int, err error) {
	c, o, ok := strings.Cut(p, "/")
	if ok {
		if chunk, err = strconv.Atoi(c); err == nil {
			offset, err = strconv.Atoi(o)
		}
	}
	if !ok || err != nil || chunk < 0 || offset < 0 {
		return 0, 0, fmt.Errorf("position %q: want <chunk>/<offset>", p)
	}
	return chunk, offset, nil
}

// jobRun is one run's work on one job, holding its lease.
type jobRun struct {
	f     *Feeder
	it    *item
	owner string
	now   time.Time
	// until is when the run stops sending: its lease's end less the margin.
	until time.Time
	rep   *Report
}

// Run is one scheduled run over all active jobs. A job's failure is
// reported, logged and stored on the job (Job.Error), and the others go
// on; the error is for a run that could not even list the jobs.
func (f *Feeder) Run(ctx context.Context) (Report, error) {
	ids, err := f.store.active(ctx)
	if err != nil {
		return Report{}, err
	}
	rep := Report{Jobs: len(ids), Finished: []string{}, Held: map[string]int{}}
	owner, err := newOwner()
	if err != nil {
		return rep, err
	}
	for _, id := range ids {
		if ctx.Err() != nil {
			return rep, ctx.Err()
		}
		if err := f.runJob(ctx, id, owner, &rep); err != nil {
			rep.Errors = append(rep.Errors, id+": "+err.Error())
			f.opts.Logger.Error("job run failed", "job", id, "error", err.Error())
		}
	}
	return rep, nil
}

// newOwner names a run in the leases it takes.
func newOwner() (string, error) {
	id, err := newID(time.Time{})
	if err != nil {
		return "", err
	}
	return "run-" + id[len("j-00010101-"):], nil
}

// runJob leases job id, advances it and releases it.
func (f *Feeder) runJob(ctx context.Context, id, owner string, rep *Report) error {
	now := f.opts.Now().UTC()
	r := &jobRun{f: f, owner: owner, now: now, until: now.Add(f.opts.RunBudget), rep: rep}
	it, err := f.store.lease(ctx, id, owner, now, leaseUntil(ctx, now, f.opts.RunBudget))
	if errors.Is(err, errLeaseLost) {
		f.opts.Logger.Info("job leased by another run", "job", id)
		return nil
	}
	if err != nil {
		return err
	}
	r.it = it
	defer f.store.release(context.WithoutCancel(ctx), id, owner)
	err = r.advance(ctx)
	if errors.Is(err, errLeaseLost) {
		f.opts.Logger.Warn("job lease lost mid-run", "job", id)
		return nil
	}
	// The job's Error says what the last run met ("" once a run goes
	// through): the CLI shows it, the job stays active and is retried.
	if serr := f.store.setError(ctx, id, owner, err); serr != nil && err == nil {
		return serr
	}
	return err
}

// leaseUntil is when a run's lease on a job ends: past its budget, and
// past the run's own deadline (the feeder's Lambda timeout, ctx's
// deadline) when it has one. The budget is only checked between steps, so
// a run slowed by throttling can outlive budget+margin; a lease ending
// before the run could do would let the next minute's run take the job
// while this one still writes a chunk (an unconditional PutItem) or has a
// SendMessageBatch in flight. The lease must outlast every write the run
// can make: the function's reserved concurrency of one is a belt to it,
// and absent where the account cannot reserve. The deadline is wall time;
// its remaining duration is carried onto the run's clock. A run that ends
// releases its lease at once; only one that dies holds the job until then.
func leaseUntil(ctx context.Context, now time.Time, budget time.Duration) time.Time {
	until := now.Add(budget + leaseMargin)
	if d, ok := ctx.Deadline(); ok {
		if end := now.Add(time.Until(d) + leaseMargin); end.After(until) {
			until = end
		}
	}
	return until
}

// advance is one run's work on a leased job: forget an ended one, hold a
// paused one, list a step, feed, settle.
func (r *jobRun) advance(ctx context.Context) error {
	it := r.it
	switch it.State {
	case StateCancelled, StateDone:
		return r.f.store.deactivate(ctx, it.ID)
	case StatePaused:
		r.rep.Held[HeldPaused]++
		return nil
	}
	if !it.ListingDone {
		if err := r.list(ctx); err != nil {
			return fmt.Errorf("list: %w", err)
		}
	}
	if err := r.feed(ctx); err != nil {
		return fmt.Errorf("feed: %w", err)
	}
	return r.settle(ctx)
}

// rate is the calls a minute the job feeds at: Rate of the stack's rate
// (the job's, else the feeder's) less the live uploads expected.
func (r *jobRun) rate() float64 {
	stack := r.it.RatePerMinute
	if stack <= 0 {
		stack = r.f.opts.RatePerMinute
	}
	return Rate(stack, r.f.opts.LivePerMinute)
}

// horizon is how long a fed message can stay in the queue unended: every
// receive's visibility timeout until the dead-letter queue takes it, and
// the window it may wait before its first receive. A message fed longer ago
// has ended or dead-lettered (its record or the DLQ says which).
func (r *jobRun) horizon() time.Duration {
	return time.Duration(r.f.opts.MaxReceiveCount)*r.f.opts.Visibility + time.Duration(r.f.opts.WindowMinutes)*time.Minute
}

// inFlight is how many fed messages may still be in the queue: those sent
// less the larger of those that ended and those sent before the horizon.
func (r *jobRun) inFlight() int64 {
	it := r.it
	// A message dropped while the job was paused has left the queue: it
	// waits in Dropped to be sent again.
	ended := it.Done + it.Failed + it.Skipped - it.ListSkipped + int64(len(it.Dropped))
	var old int64
	cutoff := r.now.Add(-r.horizon()).Unix()
	for _, m := range it.SentMarks {
		if m.At <= cutoff {
			old = max(old, m.Sent)
		}
	}
	return max(it.Sent-max(ended, old), 0)
}

// allFed reports whether everything listed was fed (nothing left to retry
// or to send again after a pause).
func (r *jobRun) allFed() bool {
	it := r.it
	return it.ListingDone && it.FedChunk >= it.Chunks && len(it.Retry) == 0 && len(it.Dropped) == 0
}

// settle marks the job running once its listing is done, and done once
// everything is fed and nothing is in flight.
func (r *jobRun) settle(ctx context.Context) error {
	it := r.it
	switch {
	case r.allFed() && r.inFlight() == 0:
		if err := r.f.store.finish(ctx, it.ID, r.owner, r.now); err != nil {
			return err
		}
		r.rep.Finished = append(r.rep.Finished, it.ID)
		if it.Kind == KindReprocess {
			r.runProgress(ctx, int(it.Listed), r.now)
		}
		r.f.opts.Logger.Info("job done", "job", it.ID, "listed", it.Listed, "sent", it.Sent, "done", it.Done,
			"failed", it.Failed, "skipped", it.Skipped, "credits", it.CreditsSpent)
		return r.f.store.deactivate(ctx, it.ID)
	case it.ListingDone && it.State == StateListing:
		return r.f.store.update(ctx, it.ID, r.owner, nil,
			expression.Set(expression.Name(AttrState), expression.Value(StateRunning)).
				Set(expression.Name(AttrUpdated), expression.Value(r.now)))
	}
	return nil
}

// feed sends the job's next messages: a minute's worth at its rate (more
// when a run was missed, up to maxCatchUp), never more than the window
// allows in flight, spread over the coming minute by DelaySeconds.
func (r *jobRun) feed(ctx context.Context) error {
	it := r.it
	if r.f.opts.DailyBudget > 0 {
		reserved, err := r.f.ledger.CreditsReserved(ctx, r.now.Format("2006-01-02"))
		if err != nil {
			return err
		}
		if reserved >= r.f.opts.DailyBudget {
			r.rep.Held[HeldBudget]++
			return r.f.store.setHeld(ctx, it.ID, r.owner, HeldBudget)
		}
	}
	rate := r.rate()
	// A job's first run feeds a minute's worth; later ones the time since
	// the last feeding, up to maxCatchUp.
	elapsed := time.Minute
	if !it.FedAt.IsZero() {
		elapsed = min(max(r.now.Sub(it.FedAt), 0), maxCatchUp)
	}
	want := rate*elapsed.Minutes() + it.FeedCarry
	room := math.Ceil(rate*float64(r.f.opts.WindowMinutes)) - float64(r.inFlight())
	n := int(math.Floor(min(want, room)))
	carry := 0.0
	if want <= room {
		carry = want - math.Floor(want)
	}
	todo, err := r.pending(ctx, n)
	if err != nil {
		return err
	}
	for i := 0; i < len(todo); i += BatchMax {
		if !r.f.opts.Now().Before(r.until) {
			break // the lease ends soon: the next run goes on
		}
		batch := todo[i:min(i+BatchMax, len(todo))]
		if err := r.send(ctx, batch, i, len(todo)); err != nil {
			return err
		}
	}
	return r.f.store.fed(ctx, it, r.owner, r.now, rate, carry, r.horizon())
}

// pending is a message to send: its position and body.
type pending struct {
	pos  string
	body string
	// nextChunk and nextOffset are the feeding position after it; resend
	// marks a retried or dropped one, which does not move the position.
	nextChunk, nextOffset int
	resend                bool
}

// pending collects up to n messages to send: the retried and dropped
// positions first, then the manifest from the feeding position.
func (r *jobRun) pending(ctx context.Context, n int) ([]pending, error) {
	it := r.it
	var out []pending
	chunks := map[int][]entry{}
	read := func(c int) ([]entry, error) {
		if e, ok := chunks[c]; ok {
			return e, nil
		}
		e, err := r.f.store.getChunk(ctx, it.ID, c)
		if err == nil {
			chunks[c] = e
		}
		return e, err
	}
	for _, pos := range append(append([]string(nil), it.Retry...), it.Dropped...) {
		if len(out) >= n {
			return out, nil
		}
		c, o, err := parsePosition(pos)
		if err != nil {
			return nil, err
		}
		objs, err := read(c)
		if err != nil {
			return nil, err
		}
		if o >= len(objs) {
			return nil, fmt.Errorf("position %s is past chunk %d's %d objects", pos, c, len(objs))
		}
		body, err := r.body(objs[o], pos)
		if err != nil {
			return nil, err
		}
		out = append(out, pending{pos: pos, body: body, resend: true})
	}
	c, o := it.FedChunk, it.FedOffset
	for len(out) < n && c < it.Chunks {
		objs, err := read(c)
		if err != nil {
			return nil, err
		}
		if o >= len(objs) {
			c, o = c+1, 0
			continue
		}
		pos := Position(c, o)
		body, err := r.body(objs[o], pos)
		if err != nil {
			return nil, err
		}
		o++
		if o >= len(objs) {
			c, o = c+1, 0
		}
		out = append(out, pending{pos: pos, body: body, nextChunk: c, nextOffset: o})
	}
	return out, nil
}

// body is e's message.
func (r *jobRun) body(e entry, pos string) (string, error) {
	it := r.it
	bucket := e.Bucket
	if bucket == "" {
		bucket = it.Bucket
	}
	o := jobmsg.Object{Job: it.ID, Kind: string(it.Kind), Pos: pos, Bucket: bucket, Key: e.Key, VersionID: e.VersionID,
		ETag: e.ETag, Size: e.Size, Replaces: e.Replaces}
	if it.Kind == KindReprocess {
		o.Run, o.ModelID, o.CreditsPerCall = it.Run, it.ModelID, it.Price
	}
	return jobmsg.Body(o)
}

// send sends batch (the messages at index from of a run's total) and
// records it on the job: the feeding position moves past it, the entries
// SQS refused are kept for the next run, a resent one leaves its list.
func (r *jobRun) send(ctx context.Context, batch []pending, from, total int) error {
	entries := make([]sqstypes.SendMessageBatchRequestEntry, len(batch))
	for i, p := range batch {
		entries[i] = sqstypes.SendMessageBatchRequestEntry{
			Id:           aws.String(strconv.Itoa(i)),
			MessageBody:  aws.String(p.body),
			DelaySeconds: int32((from + i) * SpreadSeconds / total),
		}
	}
	out, err := r.f.sender.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(r.f.queueURL), Entries: entries})
	if err != nil {
		return fmt.Errorf("send to %s: %w", r.f.queueURL, err)
	}
	failed := map[int]bool{}
	for _, fe := range out.Failed {
		i, err := strconv.Atoi(aws.ToString(fe.Id))
		if err != nil || i < 0 || i >= len(batch) {
			return fmt.Errorf("send to %s: a failure names entry %q", r.f.queueURL, aws.ToString(fe.Id))
		}
		failed[i] = true
		r.f.opts.Logger.Warn("message refused, sent again next run", "job", r.it.ID, "pos", batch[i].pos,
			"code", aws.ToString(fe.Code), "reason", aws.ToString(fe.Message))
	}
	return r.f.store.recordBatch(ctx, r.it, r.owner, r.now, batch, failed, r.rep)
}

// list advances the job's listing one bounded step.
func (r *jobRun) list(ctx context.Context) error {
	if r.it.Kind == KindReprocess {
		return r.listRuns(ctx)
	}
	return r.listBucket(ctx)
}

// listBucket reads up to ListPages pages of the bucket's versions from the
// stored cursor, keeps the latest version of each object (a deleted
// object's latest is its delete marker, which is not listed as a version),
// leaves out those already done (a final record, unless Requeue reopens an
// outcome_unknown one), and appends the rest to the manifest.
func (r *jobRun) listBucket(ctx context.Context) error {
	it := r.it
	for page := 0; page < r.f.opts.ListPages && r.f.opts.Now().Before(r.until); page++ {
		in := &s3.ListObjectVersionsInput{Bucket: aws.String(it.Bucket)}
		if it.Prefix != "" {
			in.Prefix = aws.String(it.Prefix)
		}
		if r.f.opts.PageSize > 0 {
			in.MaxKeys = aws.Int32(r.f.opts.PageSize)
		}
		if it.CursorKey != "" {
			in.KeyMarker = aws.String(it.CursorKey)
			if it.CursorVersion != "" {
				in.VersionIdMarker = aws.String(it.CursorVersion)
			}
		}
		out, err := r.f.lister.ListObjectVersions(ctx, in)
		if err != nil {
			return fmt.Errorf("list s3://%s/%s: %w", it.Bucket, it.Prefix, err)
		}
		versions := afterCursor(out.Versions, it.CursorKey, it.CursorVersion)
		var latest []entry
		for _, v := range versions {
			if !aws.ToBool(v.IsLatest) {
				continue // older versions were superseded; a deleted object's latest is its delete marker
			}
			e := entry{Key: aws.ToString(v.Key), VersionID: aws.ToString(v.VersionId), ETag: strings.Trim(aws.ToString(v.ETag), `"`),
				Size: aws.ToInt64(v.Size)}
			if e.VersionID == "null" {
				e.VersionID = "" // unversioned bucket: S3's own notifications carry none
			}
			latest = append(latest, e)
		}
		send, err := r.wantedAll(ctx, latest)
		if err != nil {
			return err
		}
		var entries []entry
		for i, e := range latest {
			if send[i] {
				entries = append(entries, e)
			}
		}
		listed, skipped := int64(len(latest)), int64(len(latest)-len(entries))
		done := !aws.ToBool(out.IsTruncated)
		cursor := listCursor{key: aws.ToString(out.NextKeyMarker), version: aws.ToString(out.NextVersionIdMarker)}
		if !done && cursor.key == "" {
			// S3 names the next markers of a truncated page; a stand-in
			// that does not (gofakes3's in-memory backend) goes on from
			// the page's last key, which afterCursor leaves out if the
			// next page repeats it.
			if len(versions) == 0 {
				return fmt.Errorf("list s3://%s/%s: a truncated page with no versions and no next marker", it.Bucket, it.Prefix)
			}
			// The key alone: gofakes3 fails a version marker, and a key's
			// latest version is its first listed, so the rest of a key
			// cut by the page is nothing a backfill sends.
			cursor = listCursor{key: aws.ToString(versions[len(versions)-1].Key)}
		}
		if err := r.appendManifest(ctx, entries, listed, skipped, cursor, done); err != nil {
			return err
		}
		if done {
			return nil
		}
	}
	return nil
}

// afterCursor leaves out the versions a page starts with that the cursor
// names (key, and version when given): those the previous page listed.
func afterCursor(versions []s3types.ObjectVersion, key, version string) []s3types.ObjectVersion {
	for len(versions) > 0 && key != "" && aws.ToString(versions[0].Key) == key &&
		(version == "" || aws.ToString(versions[0].VersionId) == version) {
		versions = versions[1:]
	}
	return versions
}

// lookupWorkers bounds the record reads a page's listing runs at once. Read
// one after the other, a 1,000-object page took 4.7 to 9 s against DynamoDB
// Local (CPU-bound there, so no faster 16 at a time); DynamoDB's reads are
// latency-bound, and 16 at once should let a run reach its 20 pages while
// staying far below a table's on-demand read throughput (docs/jobs.md).
const lookupWorkers = 16

// wantedAll is wanted for each entry, lookupWorkers at a time, in order.
func (r *jobRun) wantedAll(ctx context.Context, entries []entry) ([]bool, error) {
	send := make([]bool, len(entries))
	errs := make([]error, len(entries))
	sem := make(chan struct{}, lookupWorkers)
	var wg sync.WaitGroup
	for i := range entries {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			send[i], errs[i] = r.wanted(ctx, entries[i])
		})
	}
	wg.Wait()
	// The first error says it (a throttled table fails them all alike):
	// the job's Error is one line.
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return send, nil
}

// wanted reports whether a backfill sends e: not when its record is final,
// unless the job requeues outcome_unknown records and e's is one (reopened
// here, so that the predictor claims it again).
func (r *jobRun) wanted(ctx context.Context, e entry) (bool, error) {
	ref := ledger.ObjectRef{Bucket: r.it.Bucket, Key: e.Key, VersionID: e.VersionID, ETag: e.ETag}
	rec, err := r.f.ledger.Lookup(ctx, ref)
	if err != nil {
		return false, fmt.Errorf("look up %s: %w", e.Key, err)
	}
	if rec == nil || !rec.Final() {
		return true, nil
	}
	if !r.it.Requeue || rec.Status != ledger.StatusFailed || rec.ErrorCode != ledger.ErrorCodeOutcomeUnknown {
		return false, nil
	}
	if err := r.f.ledger.Reopen(ctx, ref, ledger.ErrorCodeOutcomeUnknown); err != nil {
		r.f.opts.Logger.Warn("record not requeued", "job", r.it.ID, "key", e.Key, "error", err.Error())
		return false, nil
	}
	return true, nil
}

// listCursor is where a listing goes on.
type listCursor struct {
	key, version string
	offset       int
}

// appendManifest writes entries as the job's next chunks, then records the
// listing's progress on the job item (conditioned on the chunks it counts,
// so a run that lost its lease cannot count a chunk twice).
func (r *jobRun) appendManifest(ctx context.Context, entries []entry, listed, skipped int64, cursor listCursor, done bool) error {
	it := r.it
	chunks := splitChunks(entries)
	for i, c := range chunks {
		if err := r.f.store.putChunk(ctx, it.ID, it.Chunks+i, c); err != nil {
			return err
		}
	}
	cond := expression.Name(attrChunks).Equal(expression.Value(it.Chunks))
	update := expression.Set(expression.Name(attrChunks), expression.Value(it.Chunks+len(chunks))).
		Add(expression.Name(attrListed), expression.Value(listed)).
		Add(expression.Name(AttrSkipped), expression.Value(skipped)).
		Add(expression.Name(attrListSkipped), expression.Value(skipped)).
		Set(expression.Name(attrListingDone), expression.Value(done)).
		Set(expression.Name(AttrUpdated), expression.Value(r.now))
	if listed > 0 {
		// Listing is progress too: a requeue-unknown backfill over a
		// bucket with few matches lists for long before anything ends,
		// and must not read as stalled (JobStalled) meanwhile.
		update = update.Set(expression.Name(AttrLastProgress), expression.Value(r.now))
	}
	update = setOrRemove(update, attrCursorKey, cursor.key)
	update = setOrRemove(update, attrCursorVersion, cursor.version)
	if cursor.offset > 0 {
		update = update.Set(expression.Name(attrCursorOffset), expression.Value(cursor.offset))
	}
	if err := r.f.store.update(ctx, it.ID, r.owner, &cond, update); err != nil {
		return err
	}
	it.Chunks += len(chunks)
	it.Listed += listed
	it.Skipped += skipped
	it.ListSkipped += skipped
	it.ListingDone = done
	it.CursorKey, it.CursorVersion, it.CursorOffset = cursor.key, cursor.version, cursor.offset
	r.rep.Listed += listed
	return nil
}

func setOrRemove(u expression.UpdateBuilder, name, v string) expression.UpdateBuilder {
	if v == "" {
		return u.Remove(expression.Name(name))
	}
	return u.Set(expression.Name(name), expression.Value(v))
}

// runProgress writes a reprocess job's figures on its run's item (the
// objects it covers, and when it finished), as geolocate runs shows them.
// A run item the CLI did not make is logged, not an error of the job: the
// records are what is true.
func (r *jobRun) runProgress(ctx context.Context, selected int, finished time.Time) {
	if err := r.f.ledger.SetRunProgress(ctx, r.it.Run, selected, finished); err != nil {
		r.f.opts.Logger.Warn("run progress not recorded", "job", r.it.ID, "run", r.it.Run, "error", err.Error())
	}
}

// listRuns plans a reprocess job from the results table: its selection's
// records (up to the job's creation, so that the run's own answers and
// later uploads do not shift the plan between runs), grouped and sampled as
// geolocate reprocess plans a run, written in chunks from the stored offset
// until the run's budget ends.
func (r *jobRun) listRuns(ctx context.Context) error {
	it := r.it
	sel, err := ParseSelection(it.Selection)
	if err != nil {
		return err
	}
	in := sel.Query(it.Created)
	if in.Until.IsZero() || in.Until.After(it.Created) {
		in.Until = it.Created
	}
	// The plan is made in one run's memory.
	records, err := SelectRecords(ctx, r.f.ledger, in, r.f.opts.PlanRecords)
	if err != nil {
		return err
	}
	plan := PlanRun(records, sel, it.Run)
	todo := plan.Todo[min(it.CursorOffset, len(plan.Todo)):]
	first := it.CursorOffset == 0
	for len(todo) > 0 || first {
		n := min(len(todo), MaxChunkObjects)
		entries := make([]entry, n)
		for i, rec := range todo[:n] {
			entries[i] = entry{Bucket: rec.Bucket, Key: rec.Key, VersionID: rec.VersionID, ETag: rec.ETag, Size: rec.Size, Replaces: rec.Run}
		}
		todo = todo[n:]
		var listed, skipped int64
		if first {
			// The plan's counts once: its selected versions, of which
			// those the run finished are skipped.
			listed, skipped, first = int64(plan.Selected), int64(plan.Done), false
		}
		cursor := listCursor{offset: it.CursorOffset + n}
		last := len(todo) == 0
		if err := r.appendManifest(ctx, entries, listed, skipped, cursor, last); err != nil {
			return err
		}
		if last {
			// The run item says how many objects the run covers, as
			// geolocate runs shows it (REMAINING).
			r.runProgress(ctx, int(it.Listed), time.Time{})
		}
		if !r.f.opts.Now().Before(r.until) {
			return nil
		}
	}
	return nil
}
