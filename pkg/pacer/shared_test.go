package pacer_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/time/rate"

	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
	"github.com/geolocate-aws/geolocate/pkg/local/simclock"
	"github.com/geolocate-aws/geolocate/pkg/pacer"
	"github.com/geolocate-aws/geolocate/pkg/shared/tableschema"
)

func TestMain(m *testing.M) { awspartstest.Main(m) }

var epoch = time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)

// take reserves a slot from p and returns when it starts on clk (Reserve
// does not sleep, so the simulated clock has not moved).
func take(t *testing.T, p *pacer.Shared, clk *simclock.Clock, within time.Duration) (time.Time, error) {
	t.Helper()
	d, err := p.Reserve(context.Background(), within)
	if err != nil {
		return time.Time{}, err
	}
	return clk.Now().Add(d), nil
}

// newPacers returns n pacers sharing one schedule on a fresh table, as n
// instances of the function would, all reading clk.
func newPacers(t *testing.T, n int, perMinute float64, clk func() time.Time, optFns ...func(*pacer.Options)) ([]*pacer.Shared, *dynamodb.Client, string) {
	t.Helper()
	client, table := awspartstest.DynamoDB(t)
	ps := make([]*pacer.Shared, n)
	for i := range ps {
		// No guard: the tests check the spacing's arithmetic exactly.
		base := func(o *pacer.Options) { o.Clock, o.Guard, o.WindowMargin = clk, -1, -1 }
		p, err := pacer.NewShared(client, table, perMinute, append([]func(*pacer.Options){base}, optFns...)...)
		if err != nil {
			t.Fatal(err)
		}
		ps[i] = p
	}
	return ps, client, table
}

func TestSlotsOfEveryInstanceAreSpacedByTheRate(t *testing.T) {
	clk := simclock.New(epoch)
	ps, _, _ := newPacers(t, 4, 600, clk.Now) // 100 ms apart
	var (
		mu    sync.Mutex
		slots []time.Time
		wg    sync.WaitGroup
	)
	for _, p := range ps {
		for range 3 { // three workers per instance, as a batch's parallelism
			wg.Go(func() {
				for range 5 {
					s, err := take(t, p, clk, pacer.Unbounded)
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					slots = append(slots, s)
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	if len(slots) != 60 {
		t.Fatalf("%d slots, want 60", len(slots))
	}
	slices.SortFunc(slots, time.Time.Compare)
	if !slots[0].Equal(epoch) {
		t.Errorf("first slot %v, want now (%v): an idle schedule grants at once", slots[0], epoch)
	}
	for i := 1; i < len(slots); i++ {
		if gap := slots[i].Sub(slots[i-1]); gap != 100*time.Millisecond {
			t.Fatalf("slots %d and %d are %v apart, want exactly 100ms: %v", i-1, i, gap, slots[:i+1])
		}
	}
	var writes, conflicts int64
	for _, p := range ps {
		st := p.Stats()
		writes += st.Writes
		conflicts += st.Conflicts
	}
	t.Logf("60 slots: %d writes, %d conflicts", writes, conflicts)
	if writes-conflicts != 60 {
		t.Errorf("%d successful writes for 60 slots, want one each", writes-conflicts)
	}
}

func TestNoSlotWithinTheTimeLeftLeavesTheScheduleAlone(t *testing.T) {
	clk := simclock.New(epoch)
	ps, _, _ := newPacers(t, 2, 60, clk.Now) // 1 s apart
	for range 3 {
		if _, err := take(t, ps[0], clk, pacer.Unbounded); err != nil {
			t.Fatal(err)
		}
	}
	// The next free slot is epoch+3s; an instance that must call by +2s
	// gets none and takes none.
	if _, err := take(t, ps[1], clk, 2*time.Second); !errors.Is(err, pacer.ErrNoSlot) {
		t.Fatalf("Take with latest before the next slot: err = %v, want ErrNoSlot", err)
	}
	// One write: the refused conditional write returned the item
	// (ReturnValuesOnConditionCheckFailure), so the pacer knew at once the
	// next slot was too late, without a retry or a read.
	if w := ps[1].Stats().Writes; w != 1 {
		t.Errorf("%d writes to learn there was no slot in time, want 1", w)
	}
	s, err := take(t, ps[1], clk, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if want := epoch.Add(3 * time.Second); !s.Equal(want) {
		t.Errorf("slot %v, want %v: the refused Take must not have used it", s, want)
	}
}

func TestThrottledMovesTheScheduleForEveryInstanceAndWidensOnce(t *testing.T) {
	clk := simclock.New(epoch)
	ps, _, _ := newPacers(t, 2, 60, clk.Now)
	ctx := context.Background()
	if _, err := take(t, ps[0], clk, pacer.Unbounded); err != nil {
		t.Fatal(err)
	}
	// Instance 0 is refused and asked to wait 3 s: instance 1 must wait too.
	ps[0].Throttled(ctx, 3*time.Second)
	// 3 s on a 1 s spacing is capped at the largest widening (10%).
	if got := ps[0].Interval(); got != 1100*time.Millisecond {
		t.Errorf("spacing after a 429 = %v, want 1.1s", got)
	}
	s, err := take(t, ps[1], clk, pacer.Unbounded)
	if err != nil {
		t.Fatal(err)
	}
	if want := epoch.Add(3 * time.Second); s.Before(want) {
		t.Errorf("instance 1's slot %v is before the service's retry time %v", s, want)
	}
	// A second 429 of the same overshoot (a slot taken before the widening)
	// does not widen again.
	ps[1].Throttled(ctx, 100*time.Millisecond)
	s2, err := take(t, ps[0], clk, pacer.Unbounded)
	if err != nil {
		t.Fatal(err)
	}
	if got := s2.Sub(s); got != 1100*time.Millisecond {
		t.Errorf("spacing after a second 429 of the same overshoot = %v, want 1.1s (one widening)", got)
	}
	if w := ps[0].Stats().Widenings + ps[1].Stats().Widenings; w != 1 {
		t.Errorf("%d widenings, want 1", w)
	}
}

func TestSpacingProbesBackToTheConfiguredRateAndNeverBelow(t *testing.T) {
	clk := simclock.New(epoch)
	ps, _, _ := newPacers(t, 1, 600, clk.Now)
	p := ps[0]
	ctx := context.Background()
	if _, err := take(t, p, clk, pacer.Unbounded); err != nil {
		t.Fatal(err)
	}
	p.Throttled(ctx, 10*time.Millisecond) // 10% of 100 ms
	if got := p.Interval(); got != 110*time.Millisecond {
		t.Fatalf("spacing after a 10 ms delay = %v, want 110ms", got)
	}
	prev := time.Time{}
	for i := range 1000 {
		s, err := take(t, p, clk, pacer.Unbounded)
		if err != nil {
			t.Fatal(err)
		}
		if !prev.IsZero() && s.Sub(prev) < 100*time.Millisecond {
			t.Fatalf("slot %d only %v after the previous: below the configured rate", i, s.Sub(prev))
		}
		prev = s
	}
	if got := p.Interval(); got != 100*time.Millisecond {
		t.Errorf("spacing after 1,000 slots = %v, want back at 100ms", got)
	}
}

func TestASpacingBelowThisInstancesRateIsReset(t *testing.T) {
	clk := simclock.New(epoch)
	client, table := awspartstest.DynamoDB(t)
	fast, err := pacer.NewShared(client, table, 120, func(o *pacer.Options) { o.Clock, o.Guard, o.WindowMargin = clk.Now, -1, -1 })
	if err != nil {
		t.Fatal(err)
	}
	slow, err := pacer.NewShared(client, table, 60, func(o *pacer.Options) { o.Clock, o.Guard, o.WindowMargin = clk.Now, -1, -1 })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := take(t, fast, clk, pacer.Unbounded); err != nil { // spacing 500 ms
		t.Fatal(err)
	}
	if _, err := take(t, slow, clk, pacer.Unbounded); err != nil { // sees 500 ms < its 1 s
		t.Fatal(err)
	}
	out, err := client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{
			tableschema.PartitionKey: &types.AttributeValueMemberS{Value: "PACE#" + pacer.DefaultName},
			tableschema.SortKey:      &types.AttributeValueMemberS{Value: "SCHEDULE"},
		}})
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Item["interval_us"].(*types.AttributeValueMemberN).Value; got != "1000000" {
		t.Errorf("interval_us = %s after an instance configured at 60/min saw 500 ms, want 1000000", got)
	}
}

// strictService is a rate limiter with no burst, as the simulator's: a call
// less than 1/rate after the previous accepted one is refused with the
// exact delay, and the refused call uses nothing.
type strictService struct{ lim *rate.Limiter }

func (s strictService) call(now time.Time) (time.Duration, bool) {
	r := s.lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return d, false
	}
	return 0, true
}

// TestConfiguredTwiceTheRealRateConverges runs three instances on a
// simulated clock against a service accepting 60 calls a minute while the
// pipeline is configured for 120: the schedule must settle near the real
// rate with few refusals once settled.
func TestConfiguredTwiceTheRealRateConverges(t *testing.T) {
	clk := simclock.New(epoch)
	ps, _, _ := newPacers(t, 3, 120, clk.Now)
	svc := strictService{rate.NewLimiter(1, 1)}
	ctx := context.Background()
	type call struct {
		at time.Time
		ok bool
	}
	var calls []call
	for i := range 900 {
		p := ps[i%len(ps)]
		s, err := take(t, p, clk, pacer.Unbounded)
		if err != nil {
			t.Fatal(err)
		}
		if d := s.Sub(clk.Now()); d > 0 {
			clk.Advance(d)
		}
		retry, ok := svc.call(clk.Now())
		if !ok {
			p.Throttled(ctx, retry)
		}
		calls = append(calls, call{clk.Now(), ok})
	}
	// Converged: from the first 100-call window with at most 5% refused.
	settled := -1
	for i := 0; i+100 <= len(calls) && settled < 0; i += 10 {
		refused := 0
		for _, c := range calls[i : i+100] {
			if !c.ok {
				refused++
			}
		}
		if refused <= 5 {
			settled = i
		}
	}
	if settled < 0 {
		t.Fatal("never converged to at most 5% refused calls")
	}
	rest := calls[settled:]
	ok, refused := 0, 0
	for _, c := range rest {
		if c.ok {
			ok++
		} else {
			refused++
		}
	}
	span := rest[len(rest)-1].at.Sub(rest[0].at)
	perMinute := float64(ok-1) / span.Minutes()
	t.Logf("converged after %d calls (%v); then %d accepted at %.1f/min, %d refused (%.1f%%)",
		settled, calls[settled].at.Sub(epoch), ok, perMinute, refused, 100*float64(refused)/float64(len(rest)))
	if perMinute < 54 {
		t.Errorf("settled rate %.1f/min, want at least 90%% of the real 60", perMinute)
	}
	if share := float64(refused) / float64(len(rest)); share > 0.05 {
		t.Errorf("%.1f%% refused after converging, want at most 5%%", 100*share)
	}
}

// Against a limiter that does not count whole seconds the guard widens the
// spacing; against the sliding log the window margin alone does.
func TestTheGuardWidensTheConfiguredSpacing(t *testing.T) {
	clk := simclock.New(epoch)
	client, table := awspartstest.DynamoDB(t)
	p, err := pacer.NewShared(client, table, 60, func(o *pacer.Options) {
		o.Clock, o.WindowMargin, o.IgnoreServiceClock = clk.Now, -1, true
	})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := take(t, p, clk, pacer.Unbounded)
	b, err := take(t, p, clk, pacer.Unbounded)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := b.Sub(a), time.Second+pacer.DefaultGuard; got != want {
		t.Errorf("spacing at 60/min = %v, want 1s plus the %v guard", got, pacer.DefaultGuard)
	}
}

// DefaultSpacing is the spacing a pacer with the default options keeps:
// R over a minute and a second where it probes the service's clock (at
// most 60 a minute), over a minute and half a second above (99.2% of R);
// Spacing with IgnoreServiceClock adds the guard, capped at 2.5%.
func TestDefaultSpacingIsThePacersOwn(t *testing.T) {
	client, table := awspartstest.DynamoDB(t)
	strict := func(o *pacer.Options) { o.IgnoreServiceClock = true }
	for _, tt := range []struct {
		rate         float64
		want, strict time.Duration
	}{
		{30, 2033334 * time.Microsecond, 2016667 * time.Microsecond},
		{120, 504167 * time.Microsecond, 512 * time.Millisecond},
		{600, 100834 * time.Microsecond, 102500 * time.Microsecond},
		// Ten shards at 3,000 a minute each.
		{30000, 2016700 * time.Nanosecond, 2050 * time.Microsecond},
	} {
		p, err := pacer.NewShared(client, table, tt.rate)
		if err != nil {
			t.Fatal(err)
		}
		if got, own := pacer.DefaultSpacing(tt.rate), p.Interval(); got != tt.want || own != tt.want {
			t.Errorf("at %v/min: DefaultSpacing %v, the pacer's %v; want %v", tt.rate, got, own, tt.want)
		}
		if got := pacer.Spacing(tt.rate, strict); got != tt.strict {
			t.Errorf("at %v/min against a token bucket: Spacing %v, want %v", tt.rate, got, tt.strict)
		}
		if got, want := pacer.Rate(tt.rate), float64(time.Minute)/float64(tt.want); got != want {
			t.Errorf("Rate(%v) = %v, want %v", tt.rate, got, want)
		}
	}
}

func TestAnIdleSlotLeavesRoomForTheCallersLead(t *testing.T) {
	clk := simclock.New(epoch)
	ps, _, _ := newPacers(t, 1, 60, clk.Now, func(o *pacer.Options) { o.Lead = 200 * time.Millisecond })
	// An idle schedule grants now; the caller prepares for up to 200 ms and
	// calls, so the next slot comes a spacing after that.
	first, err := take(t, ps[0], clk, pacer.Unbounded)
	if err != nil {
		t.Fatal(err)
	}
	second, err := take(t, ps[0], clk, pacer.Unbounded)
	if err != nil {
		t.Fatal(err)
	}
	if !first.Equal(epoch) || second.Sub(first) != 1200*time.Millisecond {
		t.Errorf("slots %v and %v, want now and 1.2s later (1 s spacing + 200 ms lead)", first, second)
	}
	// At a rate whose spacing is shorter than the lead, the lead adds at
	// most one spacing (3,000 a minute: the most one item carries).
	fast, _, _ := newPacers(t, 1, pacer.ItemRatePerMinute, clk.Now, func(o *pacer.Options) { o.Lead = 200 * time.Millisecond })
	a, _ := take(t, fast[0], clk, pacer.Unbounded)
	b, err := take(t, fast[0], clk, pacer.Unbounded)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.Sub(a); got != 40*time.Millisecond {
		t.Errorf("at 3000/min the second slot is %v after the first, want 40ms (two spacings)", got)
	}
}

func TestA429BeforeAnySlotLeavesAUsableSchedule(t *testing.T) {
	clk := simclock.New(epoch)
	ps, _, _ := newPacers(t, 2, 60, clk.Now)
	ps[0].Throttled(context.Background(), 80*time.Millisecond)
	s, err := take(t, ps[1], clk, pacer.Unbounded)
	if err != nil {
		t.Fatalf("Reserve after a 429 on a fresh schedule: %v", err)
	}
	if want := epoch.Add(80 * time.Millisecond); !s.Equal(want) {
		t.Errorf("slot %v, want the service's retry time %v", s, want)
	}
}

// TestA429AskingForAYearMovesTheScheduleOnlyByTheCap: whatever the service
// asks for, the schedule moves at most MaxDelay; the next slot comes within
// the cap, not a year later.
func TestA429AskingForAYearMovesTheScheduleOnlyByTheCap(t *testing.T) {
	clk := simclock.New(epoch)
	ps, _, _ := newPacers(t, 2, 60, clk.Now, func(o *pacer.Options) { o.MaxDelay = 2 * time.Minute })
	ps[0].Throttled(context.Background(), 365*24*time.Hour)
	s, err := take(t, ps[1], clk, 3*time.Minute)
	if err != nil {
		t.Fatalf("Reserve within 3 minutes after a 429 asking for a year: %v", err)
	}
	if want := epoch.Add(2 * time.Minute); !s.Equal(want) {
		t.Errorf("slot %v, want the cap's end %v", s, want)
	}
}

// TestAScheduleFoundAYearAheadIsRepaired: a schedule item an older version
// wrote a year ahead (it followed a 429's HTTP date) is reset by the next
// Reserve instead of refusing every slot for a year.
func TestAScheduleFoundAYearAheadIsRepaired(t *testing.T) {
	clk := simclock.New(epoch)
	ps, client, table := newPacers(t, 1, 60, clk.Now)
	yearAhead := strconv.FormatInt(epoch.Add(365*24*time.Hour).UnixMicro(), 10)
	_, err := client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: map[string]types.AttributeValue{
		tableschema.PartitionKey: &types.AttributeValueMemberS{Value: "PACE#" + pacer.DefaultName},
		tableschema.SortKey:      &types.AttributeValueMemberS{Value: "SCHEDULE"},
		"next_us":                &types.AttributeValueMemberN{Value: yearAhead},
		"interval_us":            &types.AttributeValueMemberN{Value: "1000000"},
		"widen_until_us":         &types.AttributeValueMemberN{Value: yearAhead},
	}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := take(t, ps[0], clk, 2*time.Second)
	if err != nil {
		t.Fatalf("Reserve on a schedule a year ahead: %v, want it repaired", err)
	}
	if !s.Equal(epoch) {
		t.Errorf("slot %v, want now (%v)", s, epoch)
	}
	if r := ps[0].Stats().Repairs; r != 1 {
		t.Errorf("%d repairs, want 1", r)
	}
	// A sound schedule a backlog ahead is not "repaired".
	for range 5 {
		if _, err := take(t, ps[0], clk, pacer.Unbounded); err != nil {
			t.Fatal(err)
		}
	}
	if r := ps[0].Stats().Repairs; r != 1 {
		t.Errorf("%d repairs after a backlog, want still 1", r)
	}
}

// TestSlotsAreGrantedWithinTheHorizonOnly: however long the caller could
// wait, no slot beyond Horizon is granted.
func TestSlotsAreGrantedWithinTheHorizonOnly(t *testing.T) {
	clk := simclock.New(epoch)
	ps, _, _ := newPacers(t, 1, 60, clk.Now, func(o *pacer.Options) { o.Horizon = 2 * time.Second })
	for range 3 { // now, +1 s, +2 s
		if _, err := take(t, ps[0], clk, pacer.Unbounded); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := take(t, ps[0], clk, pacer.Unbounded); !errors.Is(err, pacer.ErrNoSlot) {
		t.Errorf("a slot 3 s ahead with a 2 s horizon: err = %v, want ErrNoSlot", err)
	}
}

// TestAPauseVoidsTheHeldSlotsItReaches: slots taken ahead and held (by
// messages returned to the queue until them) stay valid unless a 429's
// pause reaches past them.
func TestAPauseVoidsTheHeldSlotsItReaches(t *testing.T) {
	clk := simclock.New(epoch)
	ps, _, _ := newPacers(t, 2, 60, clk.Now)
	ctx := context.Background()
	var held []time.Time
	for range 5 { // now, +1 s ... +4 s
		s, err := take(t, ps[0], clk, pacer.Unbounded)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, s)
	}
	for _, s := range held {
		if ok, err := ps[1].Valid(ctx, s); err != nil || !ok {
			t.Fatalf("slot %v before any 429: valid=%t, %v", s, ok, err)
		}
	}
	ps[1].Throttled(ctx, 2500*time.Millisecond)
	for i, s := range held {
		ok, err := ps[0].Valid(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		if want := s.Sub(epoch) >= 2500*time.Millisecond; ok != want {
			t.Errorf("held slot %d (+%v) after a pause to +2.5s: valid=%t, want %t", i, s.Sub(epoch), ok, want)
		}
	}
	// A new slot comes after the backlog, which the pause did not move.
	s, err := take(t, ps[1], clk, pacer.Unbounded)
	if err != nil {
		t.Fatal(err)
	}
	if s.Before(held[4]) {
		t.Errorf("new slot %v before the last held one %v", s, held[4])
	}
}

// Above ItemRatePerMinute the schedule is split over shards, items of their
// own each at its share of the rate: every shard's slots are its spacing
// apart, the shards together grant the rate, and the takes of one instance
// go round them.
func TestShardsSplitTheRateOverItems(t *testing.T) {
	clk := simclock.New(epoch)
	const rate = 3 * pacer.ItemRatePerMinute // three shards, 20 ms apart each
	ps, client, table := newPacers(t, 2, rate, clk.Now)
	var slots []time.Time
	for i := range 60 {
		s, err := take(t, ps[i%2], clk, pacer.Unbounded)
		if err != nil {
			t.Fatal(err)
		}
		slots = append(slots, s)
	}
	slices.SortFunc(slots, time.Time.Compare)
	// 60 slots at 9,000 a minute fill 400 ms: never more than 15 in 100 ms
	// (the rate's), and every 20 ms a slot of each shard.
	for i := range slots {
		n := 0
		for _, s := range slots[i:] {
			if s.Sub(slots[i]) < 100*time.Millisecond {
				n++
			}
		}
		if n > 15+2 {
			t.Fatalf("%d slots within 100 ms of %v, want at most the rate's 15 and one per other shard", n, slots[i].Sub(epoch))
		}
	}
	if span := slots[len(slots)-1].Sub(slots[0]); span < 380*time.Millisecond {
		t.Errorf("60 slots span %v, want about 400 ms at %d a minute", span, rate)
	}
	for k, pk := range []string{"PACE#default", "PACE#default#1", "PACE#default#2"} {
		out, err := client.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(table), Key: map[string]types.AttributeValue{
			tableschema.PartitionKey: &types.AttributeValueMemberS{Value: pk},
			tableschema.SortKey:      &types.AttributeValueMemberS{Value: "SCHEDULE"},
		}})
		if err != nil || out.Item == nil {
			t.Errorf("shard %d: no schedule item %s (%v)", k, pk, err)
		}
	}
	var st pacer.Stats
	for _, p := range ps {
		s := p.Stats()
		st.Slots += s.Slots
		st.Writes += s.Writes
	}
	if st.Slots != 60 {
		t.Errorf("%d slots counted, want 60", st.Slots)
	}
	if got, want := ps[0].Interval(), 20*time.Millisecond/3; got != want {
		t.Errorf("Interval %v, want a shard's 20 ms over three", got)
	}
}

// slowDB answers its first update late: the clock moves on by delay while
// the write is answered, as DynamoDB's throttling and the SDK's retries
// make it.
type slowDB struct {
	pacer.DynamoDBAPI
	clk   *simclock.Clock
	delay time.Duration
	slow  int
}

func (d *slowDB) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	out, err := d.DynamoDBAPI.UpdateItem(ctx, in, optFns...)
	if d.slow > 0 {
		d.slow--
		d.clk.Advance(d.delay)
	}
	return out, err
}

// A slot that passed while its write was answered is given up, not called
// late: the next one is taken, and the delay returned is from when Reserve
// returns.
func TestASlotGrantedPastItsTimeIsGivenUp(t *testing.T) {
	clk := simclock.New(epoch)
	client, table := awspartstest.DynamoDB(t)
	db := &slowDB{DynamoDBAPI: client, clk: clk, delay: 3 * time.Second, slow: 1}
	p, err := pacer.NewShared(db, table, 60, func(o *pacer.Options) { o.Clock, o.Guard, o.WindowMargin = clk.Now, -1, -1 })
	if err != nil {
		t.Fatal(err)
	}
	d, err := p.Reserve(context.Background(), pacer.Unbounded)
	if err != nil {
		t.Fatal(err)
	}
	// The first slot was now (epoch), granted 3 s late: given up, and the
	// next (the schedule's, epoch+1s, also past) then; the one taken is
	// now, at epoch+3s.
	if got := clk.Now().Add(d); !got.Equal(epoch.Add(3 * time.Second)) {
		t.Errorf("slot at %v, want now (3s): the late one given up", got.Sub(epoch))
	}
	if st := p.Stats(); st.Lost != 1 || st.Slots != 2 {
		t.Errorf("stats %+v, want one slot lost of two", st)
	}
}

// An instance whose hint says the schedule is idle, seen more than a slot
// ago, reads it before writing: others have moved it on, and a write for
// an idle schedule would only fail.
func TestAStaleIdleHintIsReadBeforeWriting(t *testing.T) {
	clk := simclock.New(epoch)
	ps, _, _ := newPacers(t, 2, 60, clk.Now)
	if _, err := take(t, ps[0], clk, pacer.Unbounded); err != nil {
		t.Fatal(err)
	}
	clk.Advance(5 * time.Second) // ps[0] last saw the schedule 5 s ago, idle now
	for range 3 {
		if _, err := take(t, ps[1], clk, pacer.Unbounded); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := take(t, ps[0], clk, pacer.Unbounded); err != nil {
		t.Fatal(err)
	}
	if st := ps[0].Stats(); st.Reads != 1 || st.Conflicts != 0 || st.Writes != 2 {
		t.Errorf("stats %+v, want one read and two writes without a conflict", st)
	}
}
