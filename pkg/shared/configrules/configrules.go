// Package configrules holds the rules a combination of the pipeline's
// settings must obey to work at all. Each setting alone has its range (the
// CDK app's context keys, the predictor's environment variables); these are
// the limits that only a combination breaks: a batch that cannot be paced
// within the function's timeout, a memory too small for the downscale it
// is asked to do.
//
// The CDK app (infra/config.go) and the predictor's LoadConfig both call
// Check, each naming the settings as its user knows them (context keys,
// environment variables), so a deployment the app refuses is also one the
// function refuses, and the two cannot disagree on a limit.
package configrules

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Setting identifies one input of the rules; Names maps it to the name the
// caller's user types.
type Setting int

const (
	RatePerMinute Setting = iota
	MaxConcurrency
	BatchSize
	FunctionTimeout
	FinishReserve
	Pacing
	MemoryMB
	Oversize
	MaxReceiveCount
	AccountConcurrency
)

// Names are the user-facing names of the settings, e.g. cdk.json keys.
type Names map[Setting]string

func (n Names) of(s Setting) string {
	if name, ok := n[s]; ok {
		return name
	}
	return fmt.Sprintf("setting %d", int(s))
}

// MinCallTime is the least time the predictor gives a paid call before its
// call deadline (the invocation's deadline less FinishReserve): an object
// whose call slot leaves less is not started and its message goes back.
// The predictor's default (predictor.DefaultMinCallTime) is this value, so
// the pacing rule below and the predictor agree on the usable time.
const MinCallTime = 5 * time.Second

// MaxRatePerMinute is the highest rate the stack accepts (the settings'
// bound of ratePerMinute): the highest the model of issue 48
// (pkg/local/pacesim; docs/benchmarks.md, "Pacing at scale") proved the
// shared pacer to keep, at every concurrency the stack accepts, within
// the service's limit (at least 99% of it, no 429) and its schedule within
// DynamoDB's limits (ten shards at 30,000 a minute: 1.3 writes a call,
// 630 of a partition's 1,000 write units a second at 1,000 instances).
// Nothing above was proven, with either pacing: instance pacing, N
// limiters at R/N each, drew 429s at 60,000 a minute with 200 instances.
const MaxRatePerMinute = 30000

// At rates of at most AimedRatePerMinute the shared pacer learns the
// service's clock from its answers and then aims each call inside one of
// its seconds; until then slots are spaced with a second's margin, 98.4%
// of R. Every worker of every instance takes a slot for its first message
// at once, before any answer has come back, and the slots taken while the
// clock is being learnt are held and called at that spacing however long
// they reach ahead. The model of issue 48 (pkg/local/pacesim,
// docs/benchmarks.md, pacing at scale) kept at least 99% of R with no 429
// over its 500-call window, in each of ten seeds, with up to
// MaxAimedConcurrency instances at 30 and 60 a minute; with 100 it reached
// 98.4 to 98.6%, and 160 instances of one worker each 98.8% in one seed.
// Above AimedRatePerMinute the pacer never aims, its margin is the same
// before and after, and the model kept every concurrency the stack
// accepts.
const (
	AimedRatePerMinute  = 60
	MaxAimedConcurrency = 40
)

// MaxProvenConcurrency is the most instances the model proved with shared
// pacing at ratePerMinute; 0 when no bound applies (above
// AimedRatePerMinute).
func MaxProvenConcurrency(ratePerMinute float64) int {
	if ratePerMinute > AimedRatePerMinute {
		return 0
	}
	return MaxAimedConcurrency
}

// RateWant is what ratePerMinute accepts, in a refusal's words: the bound
// and why.
var RateWant = fmt.Sprintf("a whole number of calls a minute from 1 to %d, the most the pacer is proven to keep "+
	"within the service's limit and DynamoDB's (docs/benchmarks.md, pacing at scale)", MaxRatePerMinute)

// The downscale's worst input, a 50 MP photo, peaks at downscalePeakRSSMB
// of resident memory (`make bench`, cmd/benchreport); the memory stage
// requires every input let through to stay under maxMemoryPercent of the
// function's memory, the headroom that leaves Go's collector (GOMEMLIMIT
// is 90% of it) and Lambda's own overhead room.
const (
	downscalePeakRSSMB = 262
	maxMemoryPercent   = 80
	// MinDownscaleMemoryMB is the least function memory for
	// oversize=downscale: downscalePeakRSSMB / 80%, rounded up (328).
	MinDownscaleMemoryMB = (downscalePeakRSSMB*100 + maxMemoryPercent - 1) / maxMemoryPercent
)

// MinMaxReceiveCount follows AWS's guidance for an SQS queue that triggers
// Lambda: a maxReceiveCount of at least 5, so that messages returned by
// throttling or a crashed invocation are not dead-lettered while the
// function is healthy.
const MinMaxReceiveCount = 5

// Lambda's default concurrency quota per account and region, of which
// Lambda keeps MinUnreservedConcurrency for functions without a reservation:
// "You can reserve up to the Unreserved account concurrency value that is
// shown, minus 100 for functions that don't have reserved concurrency"
// (https://docs.aws.amazon.com/lambda/latest/dg/configuration-concurrency.html).
// The predictor may use at most the quota less that minimum (half of a
// quota below 200, as new accounts may have), so the account's other
// functions, this stack's monitor among them, are never starved by it.
const (
	DefaultAccountConcurrency = 1000
	MinUnreservedConcurrency  = 100
)

// MaxConcurrencyFor is the most concurrent executions the predictor may be
// given in an account whose concurrency quota is accountConcurrency.
func MaxConcurrencyFor(accountConcurrency int) int {
	return max(accountConcurrency-MinUnreservedConcurrency, accountConcurrency/2)
}

// How uploads reach the queue (the stack's notifications setting): the
// bucket's own notification configuration, or S3's EventBridge events and a
// rule of the stack.
const (
	NotificationsS3          = "s3"
	NotificationsEventBridge = "eventbridge"
)

// Notifications is the mode a setting selects, "" choosing by the bucket:
// EventBridge for an existing bucket, whose notification configuration may
// already hold a rule S3 would refuse to overlap (and whose other consumers
// may want the same events), S3 for the stack's own bucket, which nothing
// else uses. ok is false for an unknown mode.
func Notifications(setting string, existingBucket bool) (mode string, ok bool) {
	switch setting {
	case "":
		if existingBucket {
			return NotificationsEventBridge, true
		}
		return NotificationsS3, true
	case NotificationsS3, NotificationsEventBridge:
		return setting, true
	}
	return "", false
}

// The modes the rules depend on (the predictor's PacingShared and
// OversizeDownscale).
const (
	PacingShared      = "shared"
	OversizeDownscale = "downscale"
)

// Settings are the values the rules read. A zero value means "not known
// here" and skips the rules that need it (the predictor is not told the
// account's quota, and runs outside Lambda without a memory size).
type Settings struct {
	RatePerMinute      float64
	MaxConcurrency     int
	BatchSize          int
	FunctionTimeout    time.Duration
	FinishReserve      time.Duration
	Pacing             string
	MemoryMB           int
	Oversize           string
	MaxReceiveCount    int
	AccountConcurrency int
}

// Violation is one combination that cannot work. Settings lists the
// settings involved, the one to change first.
type Violation struct {
	Settings []Setting
	Message  string
}

func (v Violation) Error() string { return v.Message }

// Check returns every rule s breaks, each message naming the settings (by
// names) and the limit.
func Check(s Settings, names Names) []Violation {
	var out []Violation
	for _, rule := range []func(Settings, Names) *Violation{
		checkPacingWithinTimeout, checkProvenConcurrency, checkDownscaleMemory,
		checkMaxReceiveCount, checkAccountConcurrency,
	} {
		if v := rule(s, names); v != nil {
			out = append(out, *v)
		}
	}
	return out
}

// Lambda's own bounds on the fixes offered.
const (
	minEventSourceConcurrency = 2
	maxFunctionTimeout        = 15 * time.Minute
)

// UsableWait is how long an invocation of timeout can wait for call slots:
// the last slot must leave MinCallTime before the call deadline, which is
// FinishReserve before the invocation's deadline.
func UsableWait(timeout, finishReserve time.Duration) time.Duration {
	return timeout - finishReserve - MinCallTime
}

// RoundOfSlots is how long the slots of one round of batches take: every
// instance (MaxConcurrency) holds a batch (BatchSize), and their objects
// take slots 60/RatePerMinute seconds apart from one schedule (shared
// pacing) or from each instance's RatePerMinute/MaxConcurrency (instance
// pacing), which is the same length. The last object of a round waits that
// long for its slot.
func RoundOfSlots(ratePerMinute float64, maxConcurrency, batchSize int) time.Duration {
	seconds := float64(maxConcurrency*batchSize) * 60 / ratePerMinute
	return time.Duration(math.Ceil(seconds * float64(time.Second)))
}

// checkPacingWithinTimeout: the objects of a round must all get their slots
// while the invocation can still call. Otherwise every round returns the
// messages that could not get one, each return spends a receive, and a
// backlog churns toward the dead-letter queue.
func checkPacingWithinTimeout(s Settings, n Names) *Violation {
	if s.RatePerMinute <= 0 || s.MaxConcurrency <= 0 || s.BatchSize <= 0 || s.FunctionTimeout <= 0 {
		return nil
	}
	round := RoundOfSlots(s.RatePerMinute, s.MaxConcurrency, s.BatchSize)
	usable := UsableWait(s.FunctionTimeout, s.FinishReserve)
	if round <= usable {
		return nil
	}
	// Only fixes Lambda allows are offered: an SQS event source's maximum
	// concurrency is at least 2, a timeout at most 15 minutes.
	perSlot := 60 / s.RatePerMinute
	var fixes []string
	if maxN := int(usable.Seconds() / (perSlot * float64(s.BatchSize))); maxN >= minEventSourceConcurrency {
		fixes = append(fixes, fmt.Sprintf("%s at most %d", n.of(MaxConcurrency), maxN))
	}
	if maxB := int(usable.Seconds() / (perSlot * float64(s.MaxConcurrency))); maxB >= 1 {
		fixes = append(fixes, fmt.Sprintf("%s at most %d", n.of(BatchSize), maxB))
	}
	minTimeout := time.Duration(math.Ceil((round + s.FinishReserve + MinCallTime).Seconds())) * time.Second
	if minTimeout <= maxFunctionTimeout {
		fixes = append(fixes, fmt.Sprintf("%s at least %s", n.of(FunctionTimeout), seconds(minTimeout)))
	}
	if len(fixes) == 0 {
		fixes = append(fixes, fmt.Sprintf("a higher %s or fewer instances and smaller batches", n.of(RatePerMinute)))
	}
	return &Violation{
		Settings: []Setting{MaxConcurrency, BatchSize, RatePerMinute, FunctionTimeout, FinishReserve},
		Message: fmt.Sprintf("%s x %s x 60 / %s = %d x %d x 60 / %g = %s of call slots for one round of batches, "+
			"above the %s an invocation can wait for them (%s %s - %s %s - %s kept for the call): "+
			"every round would return messages, each return spending a receive; want %s",
			n.of(MaxConcurrency), n.of(BatchSize), n.of(RatePerMinute), s.MaxConcurrency, s.BatchSize, s.RatePerMinute,
			seconds(round), seconds(usable), n.of(FunctionTimeout), seconds(s.FunctionTimeout),
			n.of(FinishReserve), seconds(s.FinishReserve), seconds(MinCallTime), strings.Join(fixes, ", or ")),
	}
}

// checkProvenConcurrency: at the rates where the shared pacer aims, more
// instances than the model proved hold more slots spaced for 98.4% of R
// while the service's clock is learnt, and the rate stays below 99% of R
// for as long as they reach ahead (an hour at 30 a minute with 446
// instances). The instances add nothing at such a rate: two make 30 calls
// a minute many times over. Skipped, like the round's rule, where the
// batch size is unknown (the predictor is not told it): the CDK app, which
// knows every setting, refuses at synth.
func checkProvenConcurrency(s Settings, n Names) *Violation {
	if s.RatePerMinute <= 0 || s.MaxConcurrency <= 0 || s.BatchSize <= 0 || (s.Pacing != "" && s.Pacing != PacingShared) {
		return nil
	}
	limit := MaxProvenConcurrency(s.RatePerMinute)
	if limit == 0 || s.MaxConcurrency <= limit {
		return nil
	}
	return &Violation{
		Settings: []Setting{MaxConcurrency, RatePerMinute},
		Message: fmt.Sprintf("%s %d at %s %g: above the %d instances the model proved to keep at least 99%% of the rate "+
			"at %d a minute and below (docs/benchmarks.md, pacing at scale): every instance's first slots, taken while the pacer "+
			"learns the service's clock, are spaced for 98.4%% of it, and more instances hold more of them; want %s at most %d",
			n.of(MaxConcurrency), s.MaxConcurrency, n.of(RatePerMinute), s.RatePerMinute, limit, AimedRatePerMinute,
			n.of(MaxConcurrency), limit),
	}
}

// checkDownscaleMemory: with too little memory every photo the downscale
// exists for is refused for want of memory (or, without that guard, kills
// the function).
func checkDownscaleMemory(s Settings, n Names) *Violation {
	if s.Oversize != OversizeDownscale || s.MemoryMB <= 0 || s.MemoryMB >= MinDownscaleMemoryMB {
		return nil
	}
	return &Violation{
		Settings: []Setting{MemoryMB, Oversize},
		Message: fmt.Sprintf("%s %d is too small for %s %s: a 50 MP photo's downscale peaks at %d MB "+
			"and must stay under %d%% of the memory; want %s at least %d, or %s reject",
			n.of(MemoryMB), s.MemoryMB, n.of(Oversize), OversizeDownscale, downscalePeakRSSMB,
			maxMemoryPercent, n.of(MemoryMB), MinDownscaleMemoryMB, n.of(Oversize)),
	}
}

// checkMaxReceiveCount: below AWS's minimum, a few throttled or crashed
// deliveries dead-letter healthy uploads.
func checkMaxReceiveCount(s Settings, n Names) *Violation {
	if s.MaxReceiveCount <= 0 || s.MaxReceiveCount >= MinMaxReceiveCount {
		return nil
	}
	return &Violation{
		Settings: []Setting{MaxReceiveCount},
		Message: fmt.Sprintf("%s %d is below %d, AWS's minimum for a queue that triggers Lambda: "+
			"throttled or crashed deliveries would dead-letter uploads that a retry processes; want %s at least %d",
			n.of(MaxReceiveCount), s.MaxReceiveCount, MinMaxReceiveCount, n.of(MaxReceiveCount), MinMaxReceiveCount),
	}
}

// checkAccountConcurrency: Lambda never runs more instances than the account
// leaves to one function, so a higher maximum only hides that the pipeline
// drains slower than configured (and starves every other function).
func checkAccountConcurrency(s Settings, n Names) *Violation {
	if s.AccountConcurrency <= 0 || s.MaxConcurrency <= 0 {
		return nil
	}
	limit := MaxConcurrencyFor(s.AccountConcurrency)
	if s.MaxConcurrency <= limit {
		return nil
	}
	return &Violation{
		Settings: []Setting{MaxConcurrency, AccountConcurrency},
		Message: fmt.Sprintf("%s %d is above the %d concurrent executions an account with %s %d can give one function "+
			"(the rest of the account keeps Lambda's unreserved minimum of %d, or half a smaller quota); "+
			"want %s at most %d, or raise the account's quota first and set %s to it",
			n.of(MaxConcurrency), s.MaxConcurrency, limit, n.of(AccountConcurrency), s.AccountConcurrency,
			MinUnreservedConcurrency, n.of(MaxConcurrency), limit, n.of(AccountConcurrency)),
	}
}

// seconds prints a duration in whole or fractional seconds ("105 s").
func seconds(d time.Duration) string {
	return fmt.Sprintf("%g s", math.Round(d.Seconds()*10)/10)
}
