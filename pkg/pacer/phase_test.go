package pacer_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/geolocate-aws/geolocate/pkg/local/simclock"
	"github.com/geolocate-aws/geolocate/pkg/pacer"
	"github.com/geolocate-aws/geolocate/pkg/shared/tableschema"
)

// clockedService is the service's limiter on a clock of its own: offset
// from the instances', a log of whole seconds of 30 calls per 60 s, and a
// Date header read when a call is counted. Calls reach it a varying time
// after their slot (arrival) and are answered roundTrip after it. With
// work, the service dates its answer that long after counting the call,
// as one does that counts a call when it has read the upload and dates
// the answer when its prediction is done (geosim, net/http's Date), and
// the answer arrives answerLeg later.
type clockedService struct {
	offset    time.Duration
	log       wholeSecondLog
	roundTrip time.Duration
	work      time.Duration
}

// answerLeg is an answer's way back to the instance, after a service with
// work dated it.
const answerLeg = 10 * time.Millisecond

func newClockedService(offset time.Duration) *clockedService {
	return &clockedService{offset: offset, log: wholeSecondLog{limit: 30, window: 60}, roundTrip: 200 * time.Millisecond}
}

// arrival is call i's delay from its slot to being counted: 0 to 150 ms,
// varying call to call and not in step with a window's 30 calls.
func arrival(i int) time.Duration { return time.Duration((i*7)%11) * 15 * time.Millisecond }

// learn runs the 20 calls in which the pacers learn the service's clock
// and aim, and fails the test when any is refused or none was aimed.
func (s *clockedService) learn(t *testing.T, ps []*pacer.Shared, clk *simclock.Clock) {
	t.Helper()
	if refused, _, first := s.run(t, ps, clk, 20, nil); refused != 0 || first < 0 {
		t.Fatalf("learning: %d refused, first aimed slot %d", refused, first)
	}
}

// run makes calls calls from the instances in turn, each at its slot:
// the service counts it (or refuses it, reported to the pacer as a 429)
// and answers with its Date, which the instance's pacer is told. It
// returns the refusals, the slots, and the index of the first aimed slot
// (-1: none).
func (s *clockedService) run(t *testing.T, ps []*pacer.Shared, clk *simclock.Clock, calls int, before func(i int)) (refused int, slots []time.Time, firstAimed int) {
	t.Helper()
	firstAimed = -1
	aimed := func() int64 {
		var n int64
		for _, p := range ps {
			n += p.Stats().AimedSlots
		}
		return n
	}
	for i := range calls {
		if before != nil {
			before(i)
		}
		p := ps[i%len(ps)]
		wasAimed := aimed()
		slot, err := take(t, p, clk, pacer.Unbounded)
		if err != nil {
			t.Fatal(err)
		}
		if firstAimed < 0 && aimed() > wasAimed {
			firstAimed = i
		}
		slots = append(slots, slot)
		clk.Advance(slot.Sub(clk.Now()))
		counted := slot.Add(arrival(i)).Add(s.offset)
		date := counted.Add(s.work).UTC().Format(http.TimeFormat)
		ok := s.log.call(counted)
		roundTrip := s.roundTrip
		if s.work > 0 {
			roundTrip = arrival(i) + s.work + answerLeg
		}
		clk.Advance(roundTrip)
		p.Answered(date, roundTrip)
		if !ok {
			refused++
			p.Throttled(context.Background(), time.Second)
		}
	}
	return refused, slots, firstAimed
}

// withMargin restores the default guard and window margin newPacers turns
// off.
func withMargin(o *pacer.Options) { o.Guard, o.WindowMargin = 0, 0 }

func TestThePhaseIsLearntAndTheMarginDropped(t *testing.T) {
	for _, offset := range []time.Duration{-2 * time.Second, -1300 * time.Millisecond, 250 * time.Millisecond, 999 * time.Millisecond, 1700 * time.Millisecond} {
		t.Run(offset.String(), func(t *testing.T) {
			clk := simclock.New(epoch.Add(370 * time.Millisecond))
			ps, _, _ := newPacers(t, 2, 30, clk.Now, withMargin)
			svc := newClockedService(offset)
			refused, slots, first := svc.run(t, ps, clk, 70, nil)
			if refused != 0 {
				t.Errorf("%d of 70 calls refused, want none", refused)
			}
			if first < 0 || first > 15 {
				t.Fatalf("first aimed slot: call %d, want within the first 15 (the margin kept only while the phase is unknown)", first)
			}
			// The service's whole seconds the aimed calls are counted in
			// are exactly 60 s / 30 apart: the slots within them may move
			// (to a window's start, which comes earlier as the estimate
			// narrows).
			stamp := func(i int) int64 { return slots[i].Add(arrival(i)).Add(svc.offset).Unix() }
			last := len(slots) - 1
			spacing := time.Duration(stamp(last)-stamp(first+1)) * time.Second / time.Duration(last-first-1)
			if spacing != 2*time.Second {
				t.Errorf("aimed calls counted %v apart on average, want exactly 60 s / 30", spacing)
			}
			t.Logf("aimed from call %d (%v after the first slot); %v apart after", first, slots[first].Sub(slots[0]), spacing)
		})
	}
}

// A service that dates its answer when its work is done, not when it
// counted the call: the estimate of its clock then lies later in the round
// trip than the count, and a call aimed at the round trip's middle (the
// estimate's middle plus half the round trip) is counted up to that work
// earlier than aimed, out of its second (the model's 429s at 30 and 60 a
// minute, issue 48). Aimed at the estimate's middle, the count is within
// half its width of the aim, early or late, and its upload later: what
// the placing window allows for, wherever in the round trip the Date is
// read.
func TestAnAnswerDatedAfterTheWorkStillAimsAtTheCount(t *testing.T) {
	for _, offset := range []time.Duration{-1900 * time.Millisecond, 0, 380 * time.Millisecond, 1381 * time.Millisecond} {
		t.Run(offset.String(), func(t *testing.T) {
			clk := simclock.New(epoch.Add(370 * time.Millisecond))
			ps, _, _ := newPacers(t, 2, 30, clk.Now, withMargin)
			svc := newClockedService(offset)
			svc.work = 300 * time.Millisecond
			refused, _, first := svc.run(t, ps, clk, 90, nil)
			if refused != 0 || first < 0 {
				t.Errorf("%d of 90 calls refused, first aimed slot %d; want none refused, and aimed", refused, first)
			}
			t.Logf("offset %v: %d refused, aimed from call %d", offset, refused, first)
		})
	}
}

func TestOneInstancesEstimateAimsTheOthersSlots(t *testing.T) {
	clk := simclock.New(epoch)
	ps, _, _ := newPacers(t, 2, 30, clk.Now, withMargin)
	svc := newClockedService(1234 * time.Millisecond)
	// Only the first instance calls, and learns.
	if refused, _, first := svc.run(t, ps[:1], clk, 20, nil); refused != 0 || first < 0 {
		t.Fatalf("the first instance alone: %d refused, first aimed slot %d", refused, first)
	}
	// The second, which has seen no answer, aims with the shared estimate.
	if refused, _, first := svc.run(t, ps[1:], clk, 5, nil); refused != 0 || first != 0 {
		t.Errorf("the second instance: %d refused, first aimed slot %d, want its first", refused, first)
	}
}

func TestAJumpOfTheServicesClockBringsTheMarginBack(t *testing.T) {
	for _, tc := range []struct {
		name string
		jump time.Duration
		// contradicted: an answer after the jump contradicts the estimate
		// (a jump wider than it); otherwise the first refusal removes it.
		contradicted bool
	}{
		{"1.5s", 1500 * time.Millisecond, true},
		{"-0.9s", -900 * time.Millisecond, true},
		{"0.3s", 300 * time.Millisecond, false},
		{"-0.45s", -450 * time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := simclock.New(epoch)
			// Aimed again a minute after a 429 (30 calls), not 10.
			ps, _, _ := newPacers(t, 2, 30, clk.Now, withMargin, func(o *pacer.Options) { o.AimHoldOff = time.Minute })
			svc := newClockedService(-700 * time.Millisecond)
			if refused, _, first := svc.run(t, ps, clk, 40, nil); refused != 0 || first < 0 {
				t.Fatalf("before the jump: %d refused, first aimed slot %d", refused, first)
			}
			aimedBefore := ps[0].Stats().AimedSlots + ps[1].Stats().AimedSlots
			svc.offset += tc.jump
			refused, _, _ := svc.run(t, ps, clk, 120, nil)
			resets := ps[0].Stats().PhaseResets + ps[1].Stats().PhaseResets
			if tc.contradicted && resets == 0 {
				t.Errorf("no answer contradicted the estimate after a jump of %v", tc.jump)
			}
			// A refused call costs a window's wait; more than one would be
			// a storm of aimed calls on a wrong estimate.
			if refused > 1 {
				t.Errorf("%d calls refused after the jump, want at most one", refused)
			}
			aimedAfter := ps[0].Stats().AimedSlots + ps[1].Stats().AimedSlots - aimedBefore
			if want := int64(100 - 30*refused); aimedAfter < want {
				t.Errorf("%d of 120 slots aimed after the jump, want the estimate learnt again within 20 slots (and the hold-off's 30 after a 429): at least %d", aimedAfter, want)
			}
			t.Logf("jump %v: %d refused, %d answers contradicted the estimate, %d of 120 slots aimed after", tc.jump, refused, resets, aimedAfter)
		})
	}
}

func TestUnreadableDatesKeepTheMargin(t *testing.T) {
	clk := simclock.New(epoch)
	ps, _, _ := newPacers(t, 1, 30, clk.Now, withMargin)
	p := ps[0]
	var slots []time.Time
	for i := range 12 {
		slot, err := take(t, p, clk, pacer.Unbounded)
		if err != nil {
			t.Fatal(err)
		}
		slots = append(slots, slot)
		clk.Advance(slot.Sub(clk.Now()) + 200*time.Millisecond)
		switch i % 4 {
		case 0:
			p.Answered("", 200*time.Millisecond)
		case 1:
			p.Answered("yesterday at noon", 200*time.Millisecond)
		case 2:
			p.Answered(clk.Now().UTC().Format(http.TimeFormat), -time.Second) // a round trip cannot be negative
		case 3:
			p.Answered(clk.Now().UTC().Format(time.RFC3339), 200*time.Millisecond)
		}
	}
	st := p.Stats()
	if st.BadDates != 12 || st.AimedSlots != 0 {
		t.Errorf("stats %+v, want 12 bad dates and no aimed slot", st)
	}
	if spacing := slots[11].Sub(slots[0]) / 11; spacing != 2033334*time.Microsecond {
		t.Errorf("spacing %v, want the margin's 61 s / 30", spacing)
	}
}

func TestIgnoreServiceClockKeepsTheMargin(t *testing.T) {
	clk := simclock.New(epoch)
	ps, _, _ := newPacers(t, 1, 30, clk.Now, withMargin, func(o *pacer.Options) { o.IgnoreServiceClock = true })
	svc := newClockedService(time.Second / 3)
	if refused, _, first := svc.run(t, ps, clk, 40, nil); refused != 0 || first != -1 {
		t.Errorf("%d refused, first aimed slot %d, want none of either", refused, first)
	}
}

// At more than 60 calls a minute several calls share a second: aiming them
// all at its middle would send them at once, so the margin stays.
func TestAboveOneCallASecondNothingIsAimed(t *testing.T) {
	clk := simclock.New(epoch)
	ps, _, _ := newPacers(t, 1, 120, clk.Now, withMargin)
	svc := newClockedService(700 * time.Millisecond)
	svc.log.limit = 120
	refused, slots, first := svc.run(t, ps, clk, 40, nil)
	if refused != 0 || first != -1 {
		t.Errorf("%d refused, first aimed slot %d, want none of either", refused, first)
	}
	for i := 1; i < len(slots); i++ {
		if gap := slots[i].Sub(slots[i-1]); gap < 500*time.Millisecond {
			t.Fatalf("slots %d and %d %v apart, want at least 1/R", i-1, i, gap)
		}
	}
}

// A 429 removes the shared estimate, for every instance: the next slots
// keep the margin, and the one that had learnt it does not write it back.
func TestA429RemovesTheSharedEstimate(t *testing.T) {
	clk := simclock.New(epoch)
	ps, client, table := newPacers(t, 2, 30, clk.Now, withMargin)
	svc := newClockedService(1100 * time.Millisecond)
	svc.learn(t, ps, clk)
	item := func() map[string]types.AttributeValue {
		out, err := client.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{
				tableschema.PartitionKey: &types.AttributeValueMemberS{Value: "PACE#" + pacer.DefaultName},
				tableschema.SortKey:      &types.AttributeValueMemberS{Value: "SCHEDULE"},
			}})
		if err != nil {
			t.Fatal(err)
		}
		return out.Item
	}
	if _, ok := item()["svc_off_lo_us"]; !ok {
		t.Fatalf("no estimate in the schedule item after learning: %v", item())
	}
	ps[0].Throttled(context.Background(), 2*time.Second)
	for _, attr := range []string{"svc_off_lo_us", "svc_off_hi_us", "svc_aim_us"} {
		if v, ok := item()[attr]; ok {
			t.Errorf("%s = %v after a 429, want it removed", attr, v)
		}
	}
	aimed := ps[0].Stats().AimedSlots + ps[1].Stats().AimedSlots
	if refused, _, _ := svc.run(t, ps, clk, 10, nil); refused != 0 {
		t.Errorf("%d refused after the 429", refused)
	}
	if after := ps[0].Stats().AimedSlots + ps[1].Stats().AimedSlots - aimed; after != 0 {
		t.Errorf("%d slots aimed within the hold-off after a 429, want none", after)
	}
}

// Once the phase is known, an idle arrival whose call would be counted well
// inside one of the service's seconds is granted at once: only one outside
// the second's safe window waits, to the window's start. Arrivals at every
// point of a second (50 ms apart) wait 0.5 s on average with a fixed aim
// point; with the window well under half that, and none is refused.
func TestIdleArrivalsInsideTheWindowCallAtOnce(t *testing.T) {
	clk := simclock.New(epoch.Add(370 * time.Millisecond))
	ps, _, _ := newPacers(t, 1, 30, clk.Now, withMargin)
	svc := newClockedService(-1300 * time.Millisecond)
	svc.learn(t, ps, clk)
	var (
		total     time.Duration
		atOnce    int
		refused   int
		aimedFrom = ps[0].Stats().AimedSlots
	)
	const arrivals = 20
	base := clk.Now().Add(time.Second)
	for i := range arrivals {
		// Idle: more than a spacing since the last call, at a point of
		// the second 50 ms on from the last arrival's.
		clk.Advance(base.Add(time.Duration(i) * (3*time.Second + 50*time.Millisecond)).Sub(clk.Now()))
		wait, err := ps[0].Reserve(context.Background(), pacer.Unbounded)
		if err != nil {
			t.Fatal(err)
		}
		if wait <= -time.Microsecond || wait >= time.Second {
			t.Fatalf("arrival %d waits %v, want less than a second", i, wait)
		}
		total += wait
		if wait < time.Microsecond { // the slot is now, in whole microseconds
			atOnce++
		}
		clk.Advance(wait)
		counted := clk.Now().Add(arrival(i)).Add(svc.offset)
		if !svc.log.call(counted) {
			refused++
		}
		clk.Advance(svc.roundTrip)
		ps[0].Answered(counted.UTC().Format(http.TimeFormat), svc.roundTrip)
	}
	if aimed := ps[0].Stats().AimedSlots - aimedFrom; aimed != arrivals {
		t.Fatalf("%d of %d idle arrivals aimed, want all", aimed, arrivals)
	}
	mean := total / arrivals
	if refused != 0 || mean > 250*time.Millisecond || atOnce < arrivals/4 {
		t.Errorf("%d refused, mean wait %v, %d of %d granted at once; want none, at most 250ms and at least a quarter", refused, mean, atOnce, arrivals)
	}
	t.Logf("idle arrivals: mean wait %v, %d of %d at once", mean, atOnce, arrivals)
}

// An instance whose hint predates the shared estimate (it took its slots
// ahead before the schedule was aimed, and has had no answer since) does
// not take an unaimed slot after an aimed one: that slot follows the aimed
// call in the shared aim's frame, and unplaced it may be counted in the
// same second as that call (the model of issue 48's 429s at 60 a minute
// with 40 and 60 instances). Its write fails on the aim, and the retry is
// aimed.
func TestAStaleHintDoesNotTakeAnUnaimedSlotAfterAimedOnes(t *testing.T) {
	clk := simclock.New(epoch)
	ps, _, _ := newPacers(t, 2, 30, clk.Now, withMargin)
	stale, learnt := ps[0], ps[1]
	// The first instance's workers take 20 slots ahead: 40 s of them.
	for range 20 {
		if _, err := stale.Reserve(context.Background(), pacer.Unbounded); err != nil {
			t.Fatal(err)
		}
	}
	// The second learns the service's clock from answers (ticks at other
	// points of their round trips each time), and takes an aimed slot.
	offset := 640 * time.Millisecond
	for range 20 {
		clk.Advance(1130 * time.Millisecond)
		learnt.Answered(clk.Now().Add(offset-100*time.Millisecond).UTC().Format(http.TimeFormat), 200*time.Millisecond)
	}
	if _, err := learnt.Reserve(context.Background(), pacer.Unbounded); err != nil {
		t.Fatal(err)
	}
	if learnt.Stats().AimedSlots != 1 {
		t.Fatalf("the learnt instance's slot is not aimed: %+v", learnt.Stats())
	}
	before := stale.Stats()
	if _, err := stale.Reserve(context.Background(), pacer.Unbounded); err != nil {
		t.Fatal(err)
	}
	after := stale.Stats()
	if after.AimedSlots != 1 || after.Conflicts != before.Conflicts+1 {
		t.Errorf("the stale instance's slot after the aimed one: %d aimed, %d conflicts; want it aimed after one failed write",
			after.AimedSlots, after.Conflicts-before.Conflicts)
	}
}

// A backlogged aimed take is conditional on the slot lying where its
// successor follows it as the hint's would; a hint a few slots stale
// (another instance took them) still takes its slot in one write.
func TestAStaleHintTakesABackloggedAimedSlotInOneWrite(t *testing.T) {
	clk := simclock.New(epoch)
	ps, _, _ := newPacers(t, 2, 30, clk.Now, withMargin)
	svc := newClockedService(700 * time.Millisecond)
	svc.learn(t, ps, clk)
	for range 4 {
		if _, err := take(t, ps[0], clk, pacer.Unbounded); err != nil {
			t.Fatal(err)
		}
	}
	before := ps[1].Stats()
	wait, err := ps[1].Reserve(context.Background(), pacer.Unbounded)
	if err != nil {
		t.Fatal(err)
	}
	after := ps[1].Stats()
	if wait < 8*time.Second || after.AimedSlots != before.AimedSlots+1 || after.Writes != before.Writes+1 {
		t.Errorf("stale hint: wait %v, %d aimed, %d writes (%d conflicts); want a slot behind the other's four, aimed, in one write",
			wait, after.AimedSlots-before.AimedSlots, after.Writes-before.Writes, after.Conflicts-before.Conflicts)
	}
}
