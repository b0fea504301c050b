// Command benchreport measures the pipeline's own cost next to the
// unavoidable cost (S3, the service, DynamoDB), on local parts, and writes
// the markdown report the README links (`make bench`).
//
// Stages: overhead (handler against the floor, per image, with an instant
// service and behind the service's latency, and with reuse off), memory
// (peak RSS of the predictor binary on a 10 MiB image), cold start
// (bootstrap sizes, time to ready under pkg/local/lambdaruntime), throughput
// against a rate-limited simulator at a high rate and at the service's real
// rate (30/min), reuse (the real rate with exact copies among the uploads),
// reprocess (a reprocess run over photos uploaded at the high rate, priced
// per 1,000 photos), jobcost (a backfill job's engine on DynamoDB Local,
// priced per 1,000,000 objects, and the results pipe's enrichment timed
// over the earlier stages' records),
// pacing (per-instance against shared, side by side, for several N and
// limiters), cost per 1,000 images at both rates from those figures, and the
// packages' own Go benchmarks. stages_test.go runs each stage that uses the
// local parts on tiny inputs. Everything binds
// 127.0.0.1 and stops on return or Ctrl-C.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/jobcost"
	"github.com/geolocate-aws/geolocate/pkg/pacer"
	"github.com/geolocate-aws/geolocate/pkg/predictor"
)

var allStages = []string{"overhead", "memory", "coldstart", "throughput", "reuse", "reprocess", "jobcost", "pacing", "scale", "jobsim", "gobench"}

func main() {
	if len(os.Args) > 1 && os.Args[1] == rssLauncherArg {
		os.Exit(runRSSLauncher(os.Args[2:]))
	}
	out := flag.String("out", "cmd/benchreport/REPORT.md", "report `file`, relative to the module root (- for stdout)")
	stages := flag.String("stages", strings.Join(allStages, ","), "comma-separated stages to run")
	images := flag.Int("images", 300, "images for the overhead ratio")
	warmup := flag.Int("warmup", 20, "warm-up images before measuring the overhead")
	overheadLatency := flag.Duration("overhead-latency", 200*time.Millisecond, "overhead: the service latency of the second run, what users meet (0 skips it)")
	latencyImages := flag.Int("latency-images", 100, "overhead: images for the run at -overhead-latency")
	coldStarts := flag.Int("cold-starts", 10, "cold starts to time")
	rate := flag.Float64("rate", 600, "throughput: the service's rate limit R, requests per minute")
	burst := flag.Int("sim-burst", 0, "throughput: the simulator's burst (default: the number of instances)")
	latency := flag.Duration("latency", 200*time.Millisecond, "throughput: the service latency L")
	instances := flag.Int("instances", 4, "throughput: concurrent function instances N")
	duration := flag.Duration("duration", time.Minute, "throughput: how long uploads arrive at rate R")
	retryDelay := flag.Duration("retry-delay", 2*time.Second, "throughput: redelivery delay of failed messages")
	realRate := flag.Float64("real-rate", 30, "throughput at the real rate: the service's limit, requests per minute (0 skips the run)")
	realDuration := flag.Duration("real-duration", 2*time.Minute, "throughput at the real rate: how long uploads arrive")
	realInstances := flag.Int("real-instances", 2, "throughput at the real rate: concurrent function instances (cdk.json's maxConcurrency)")
	realBurst := flag.Int("real-burst", 0, "throughput at the real rate: a token bucket of this burst instead of the service's own limiter, a sliding log of whole seconds (0)")
	reuseDuration := flag.Duration("reuse-duration", 2*time.Minute, "reuse: how long uploads arrive at the real rate with copies among them")
	reuseCopies := flag.Float64("reuse-copies", 0.3, "reuse: the share of uploads that are exact copies of an earlier photo under another key")
	reprocessPhotos := flag.Int("reprocess-photos", 200, "reprocess: distinct photos uploaded, then reprocessed in one run")
	reprocessCap := flag.Int("reprocess-cap", 200, "reprocess: the run's cap in credits (at least -reprocess-photos)")
	jobCostObjects := flag.Int("jobcost-objects", jobcost.DefaultObjects, "jobcost: the versions the measured backfill job lists")
	pacingRate := flag.Float64("pacing-rate", 120, "pacing: the service's rate limit R, requests per minute")
	pacingInstances := flag.String("pacing-instances", "2,4,10", "pacing: the numbers of instances N to compare")
	pacingDuration := flag.Duration("pacing-duration", time.Minute, "pacing: how long uploads arrive at rate R in each run")
	pacingSkew := flag.Duration("pacing-skew", 100*time.Millisecond, "pacing: the instances' clock skew for the skew runs (0 skips them)")
	slidingRate := flag.Float64("sliding-rate", 30, "pacing: the service's sliding-log limit, requests per 60 s (its public backend's is 30)")
	slidingInstances := flag.String("sliding-instances", "1,2,4,10", "pacing: the numbers of instances N run against the sliding log, all at once")
	slidingDuration := flag.Duration("sliding-duration", 5*time.Minute, "pacing: how long uploads arrive in each sliding-log run (0 skips them)")
	scaleRate := flag.Float64("scale-real-rate", 6000, "scale: the real-time run's rate R beside the model's row, requests per minute (0 skips it)")
	scaleInstances := flag.Int("scale-real-instances", 8, "scale: the real-time run's instances N (as many as two cores sustain at -scale-real-rate)")
	scaleDuration := flag.Duration("scale-real-duration", time.Minute, "scale: how long the real-time run's uploads arrive at R")
	flag.Parse()

	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	tc := throughputConfig{RatePerMinute: *rate, SimBurst: *burst, Latency: *latency, Instances: *instances,
		Duration: *duration, RetryDelay: *retryDelay, Pacing: predictor.PacingShared}
	ns, err := parseInstances(*pacingInstances)
	if err != nil {
		fmt.Fprintf(os.Stderr, "benchreport: -pacing-instances: %v\n", err)
		os.Exit(2)
	}
	sns, err := parseInstances(*slidingInstances)
	if err != nil {
		fmt.Fprintf(os.Stderr, "benchreport: -sliding-instances: %v\n", err)
		os.Exit(2)
	}
	if tc.SimBurst <= 0 {
		tc.SimBurst = tc.Instances
	}
	real := tc
	real.RatePerMinute, real.Duration, real.Instances, real.SimBurst = *realRate, *realDuration, *realInstances, *realBurst
	real.SlidingLog = *realBurst == 0
	// Steady work at the real rate: uploads as fast as the pacer calls.
	real.UploadRate = pacer.Rate(*realRate)
	reuse := real
	reuse.Duration, reuse.Copies = *reuseDuration, *reuseCopies
	opts := options{out: *out, stages: strings.Split(*stages, ","),
		overhead:        overheadConfig{Images: *images, Warmup: *warmup, CompareReuse: true},
		overheadLatency: overheadConfig{Images: *latencyImages, Warmup: min(*warmup, *latencyImages), Latency: *overheadLatency},
		coldStarts:      *coldStarts, throughput: tc, realRate: real, reuse: reuse,
		reprocess: reprocessConfig{Photos: *reprocessPhotos, Cap: *reprocessCap, Rig: tc}, jobCostObjects: *jobCostObjects,
		pacing: pacingOptions{Rate: *pacingRate, Instances: ns, Duration: *pacingDuration, Skew: *pacingSkew,
			SlidingRate: *slidingRate, SlidingInstances: sns, SlidingDuration: *slidingDuration},
		scale: scaleOptions{Real: throughputConfig{RatePerMinute: *scaleRate, SlidingLog: true, Latency: *latency,
			Instances: *scaleInstances, Duration: *scaleDuration, RetryDelay: *retryDelay, Pacing: predictor.PacingShared}}}
	if err := run(ctx, opts); err != nil {
		fmt.Fprintf(os.Stderr, "benchreport: %v\n", err)
		os.Exit(1)
	}
}

type options struct {
	out    string
	stages []string
	// overhead runs against an instant service; overheadLatency (Latency 0
	// skips it) at the service's own latency.
	overhead, overheadLatency overheadConfig
	coldStarts                int
	throughput                throughputConfig
	// realRate is the throughput run at the service's real rate, whose
	// cost the report sets beside the high rate's; RatePerMinute 0 skips it.
	realRate throughputConfig
	// reuse is the real rate with copies among the uploads (issue 37).
	reuse throughputConfig
	// reprocess is a run over photos uploaded at the high rate (issue 39).
	reprocess reprocessConfig
	// jobCostObjects are the versions the jobcost stage's job lists.
	jobCostObjects int
	pacing         pacingOptions
	scale          scaleOptions
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s  "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

// run measures the selected stages and writes the report: setup (the
// stack, the binaries), the stages, then the report.
func run(ctx context.Context, o options) error {
	b, err := setupRun(ctx, o)
	if err != nil {
		return err
	}
	defer os.RemoveAll(b.tmp)
	b.measure(ctx)
	if err := ctx.Err(); err != nil {
		return err
	}
	return b.report()
}

// benchRun is one `make bench`: its options, where it builds, and what it
// measured.
type benchRun struct {
	o    options
	root string
	tmp  string
	st   stack
	bin  string // the predictor built for this host, for memory and cold start
	r    *results
}

func (b *benchRun) want(stage string) bool { return slices.Contains(b.o.stages, stage) }

// fail records a failed stage; the others still run.
func (b *benchRun) fail(stage string, err error) {
	progress("%s failed: %v", stage, err)
	b.r.Errors = append(b.r.Errors, stage+": "+err.Error())
}

// setupRun reads the stack from cdk.json and builds what the stages run.
func setupRun(ctx context.Context, o options) (*benchRun, error) {
	root, err := moduleRoot()
	if err != nil {
		return nil, err
	}
	st, err := readStack(root)
	if err != nil {
		return nil, err
	}
	o.throughput.BatchSize = st.BatchSize
	o.realRate.BatchSize = st.BatchSize
	o.reuse.BatchSize = st.BatchSize
	o.reprocess.Rig.BatchSize = st.BatchSize
	tmp, err := os.MkdirTemp("", "benchreport-")
	if err != nil {
		return nil, err
	}
	b := &benchRun{o: o, root: root, tmp: tmp, st: st, r: &results{Machine: describeMachine(), Stack: st, Started: time.Now()}}
	progress("machine: %d CPUs, load %s", b.r.Machine.CPUs, b.r.Machine.LoadAvg)
	if b.want("memory") || b.want("coldstart") {
		progress("building the predictor for %s/%s and the bootstraps' sizes", b.r.Machine.GOOS, b.r.Machine.GOARCH)
		goos, goarch := hostPlatform()
		if b.bin, err = buildFunction(ctx, root, tmp, "predictor", goos, goarch); err != nil {
			b.fail("build", err)
		}
		if b.r.Sizes, b.r.SizesSource, err = bootstrapSizes(ctx, root, tmp); err != nil {
			b.fail("bootstrap sizes", err)
		}
	}
	return b, nil
}

// measure runs the selected stages against one set of local parts, then
// the Go benchmarks.
func (b *benchRun) measure(ctx context.Context) {
	o, st, r := b.o, b.st, b.r
	if b.want("overhead") || b.want("memory") || b.want("coldstart") || b.want("throughput") || b.want("reuse") || b.want("reprocess") || b.want("jobcost") || b.want("pacing") || b.want("scale") {
		progress("starting gofakes3, DynamoDB Local and the simulator")
		e, err := startEnv(ctx)
		if err != nil {
			b.fail("local parts", err)
			return
		}
		defer e.close()
		stages := []struct {
			name string
			fn   func() error
		}{
			{"overhead", func() (err error) {
				if r.Overhead, err = measureOverhead(ctx, e, st, o.overhead, progress); err != nil || o.overheadLatency.Latency <= 0 {
					return err
				}
				progress("overhead with the service answering after %v ...", o.overheadLatency.Latency)
				r.OverheadAtLatency, err = measureOverhead(ctx, e, st, o.overheadLatency, progress)
				return err
			}},
			{"memory", func() (err error) {
				if b.bin == "" {
					return fmt.Errorf("no predictor binary")
				}
				r.Memory, err = measureMemory(ctx, e, st, b.bin, b.tmp)
				return err
			}},
			{"coldstart", func() (err error) {
				if b.bin == "" {
					return fmt.Errorf("no predictor binary")
				}
				r.Cold, err = measureColdStarts(ctx, e, st, b.bin, o.coldStarts)
				return err
			}},
			{"throughput", func() (err error) {
				if r.Throughput, err = measureThroughput(ctx, e, st, o.throughput, progress); err != nil {
					return err
				}
				if o.realRate.RatePerMinute > 0 {
					progress("throughput at the real rate, %.0f/min ...", o.realRate.RatePerMinute)
					r.RealRate, err = measureThroughput(ctx, e, st, o.realRate, progress)
				}
				return err
			}},
			{"reuse", func() (err error) {
				r.Reuse, err = measureThroughput(ctx, e, st, o.reuse, progress)
				return err
			}},
			{"reprocess", func() (err error) {
				r.Reprocess, err = measureReprocess(ctx, e, st, o.reprocess, progress)
				return err
			}},
			{"jobcost", func() (err error) {
				r.JobCost, err = measureJobCost(ctx, e, o.jobCostObjects, progress)
				return err
			}},
			{"pacing", func() (err error) {
				base := o.throughput
				base.BatchSize = st.BatchSize
				r.Pacing, err = measurePacing(ctx, e, st, base, o.pacing, progress)
				return err
			}},
			{"scale", func() (err error) {
				r.Scale, err = measureScale(ctx, e, st, o.scale, progress)
				return err
			}},
		}
		for _, s := range stages {
			if !b.want(s.name) || ctx.Err() != nil {
				continue
			}
			progress("%s ...", s.name)
			start := time.Now()
			if err := s.fn(); err != nil {
				b.fail(s.name, err)
				continue
			}
			progress("%s done in %s", s.name, time.Since(start).Round(time.Millisecond))
		}
	}
	if b.want("jobsim") && ctx.Err() == nil {
		progress("jobsim ...")
		var err error
		if r.Jobsim, err = measureJobsim(progress); err != nil {
			b.fail("jobsim", err)
		}
	}
	if b.want("gobench") && ctx.Err() == nil {
		r.GoBench = runGoBenchmarks(ctx, b.root, progress)
	}
}

// report writes the markdown report and prints the headline.
func (b *benchRun) report() error {
	r := b.r
	r.Elapsed = time.Since(r.Started)
	report := r.markdown()
	var err error
	if b.o.out == "-" {
		_, err = os.Stdout.Write(report)
	} else {
		path := b.o.out
		if !filepath.IsAbs(path) {
			path = filepath.Join(b.root, path)
		}
		if err = os.WriteFile(path, report, 0o644); err == nil {
			progress("wrote %s", path)
		}
	}
	if err != nil {
		return err
	}
	for _, x := range r.headline() {
		fmt.Printf("%-4s  %s: %s\n", x.verdict, x.figure, x.measured)
	}
	if len(r.Errors) > 0 {
		return fmt.Errorf("%d stage(s) failed; see the report", len(r.Errors))
	}
	return nil
}
