package main

import (
	"fmt"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/bench"
)

// reuseCost is what reuseResults=content adds per 1,000 uploads of run t,
// priced at bench.ListPrices: the content ledger's items (every write,
// failed conditional ones included, and read), and the S3 GETs beyond one
// per upload (the digest reads a paid photo whole before the call opens it
// again).
type reuseCost struct {
	Content            contentUsage // per 1,000 uploads
	ExtraGets          float64      // per 1,000 uploads
	ContentUSD, GetUSD float64
}

// contentUsage is the content ledger's share of a run's DynamoDB usage;
// a failed conditional write counts as the unit AWS bills for it.
type contentUsage struct {
	Requests              int
	ReadUnits, WriteUnits float64
}

func reuseCostOf(t *throughputResult) reuseCost {
	per1000 := 1000 / float64(max(t.Uploads, 1))
	c := t.Usage.Items[contentPrefix]
	rc := reuseCost{Content: contentUsage{Requests: int(float64(c.Requests())*per1000 + 0.5),
		ReadUnits: c.ReadUnits * per1000, WriteUnits: (c.WriteUnits() + float64(c.Failed)) * per1000},
		ExtraGets: max(float64(t.Usage.Count("S3.GetObject", "S3.HeadObject")-t.Uploads), 0) * per1000}
	p := bench.ListPrices
	rc.ContentUSD = rc.Content.WriteUnits*p.DynamoDBWriteUnit + rc.Content.ReadUnits*p.DynamoDBReadUnit
	rc.GetUSD = rc.ExtraGets * p.S3GetRequest
	return rc
}

// Targets from issue 38: the pipeline's own ratio behind the service's
// latency, and the upload-to-record time at the real rate with no backlog.
const (
	targetRatioAtLatency  = 1.05
	recordOverLatency     = 500 * time.Millisecond
	ratioLatencyForTarget = 200 * time.Millisecond
)

// latencyRows are issue 38's goals 4 and 5 and the content identity's
// added time: what users meet, measured directly.
func (r *results) latencyRows() []row {
	var rows []row
	if o := r.OverheadAtLatency; o != nil {
		l := o.Config.Latency
		own := o.HandlerWall.Median - o.FloorWall.Median
		rows = append(rows, row{fmt.Sprintf("Pipeline's own time per image behind a %v service: handler minus floor, medians", l),
			fmt.Sprintf("%.1f ms (%.1f ms / %.1f ms)", bench.Ms(own), bench.Ms(o.HandlerWall.Median), bench.Ms(o.FloorWall.Median)),
			"none set", "info", ""})
		ratio := float64(o.HandlerWall.Median) / float64(o.FloorWall.Median)
		target := fmt.Sprintf("<= %.2fx", targetRatioAtLatency)
		v, why := verdict(ratio <= targetRatioAtLatency), ""
		if l != ratioLatencyForTarget {
			target, v = fmt.Sprintf("%s at %v (this run: %v)", target, ratioLatencyForTarget, l), "info"
		} else if ratio > targetRatioAtLatency {
			why = fmt.Sprintf("the pipeline's own %.1f ms per image (the claim, the slot, the record and the content ledger's writes against DynamoDB Local, the digest's read) exceed %.0f%% of the floor's %.0f ms",
				bench.Ms(own), 100*(targetRatioAtLatency-1), bench.Ms(o.FloorWall.Median))
			if z := r.Overhead; z != nil && z.ReuseOffWall.N > 0 {
				add := z.HandlerWall.Median - z.ReuseOffWall.Median
				why += fmt.Sprintf("; of that, the content identity (reuseResults=content: the digest over the bytes sent, the content claim's write) takes %.1f ms at zero latency, and without it the ratio would be about %.3fx",
					bench.Ms(add), float64(o.HandlerWall.Median-add)/float64(o.FloorWall.Median))
			}
			why += "; see the overhead section"
		}
		rows = append(rows, row{fmt.Sprintf("Overhead ratio behind a %v service, measured: handler / floor, median wall time per image", l),
			fmt.Sprintf("%.3fx", ratio), target, v, why})
	}
	if o := r.Overhead; o != nil && o.ReuseOffWall.N > 0 {
		rows = append(rows, row{"Time the content identity adds per image (reuseResults=content minus off, medians, zero latency)",
			fmt.Sprintf("%+.1f ms (%.1f ms / %.1f ms)", bench.Ms(o.HandlerWall.Median-o.ReuseOffWall.Median), bench.Ms(o.HandlerWall.Median), bench.Ms(o.ReuseOffWall.Median)),
			"none set", "info", ""})
	}
	if t := r.RealRate; t != nil {
		limit := t.Config.Latency + recordOverLatency
		p50 := t.UploadToRecord.Median
		why := ""
		if p50 > limit {
			why = "uploads arrive exactly as fast as the pacer spaces calls, so the longest delay before any one slot (the first, cold invocation; a slow write on a loaded machine) shifts every later slot by as much: a standing wait for the slot, not the queue's delivery (see docs/benchmarks.md)"
		}
		rows = append(rows, row{fmt.Sprintf("Upload to record at the real rate with no backlog (R=%.0f/min, uploads at %.1f/min, L=%v), p50 / p99", t.Config.RatePerMinute, t.Config.uploadRate(), t.Config.Latency),
			fmt.Sprintf("%.0f ms / %.0f ms", bench.Ms(p50), bench.Ms(t.UploadToRecord.P99)),
			fmt.Sprintf("p50 <= %.0f ms (L + %v)", bench.Ms(limit), recordOverLatency), verdict(p50 <= limit), why})
	}
	return rows
}

// reuseRows are issue 37's bench row: copies pay nothing, nothing is lost,
// and what reuse adds to the AWS cost.
func (r *results) reuseRows() []row {
	t := r.Reuse
	if t == nil {
		return nil
	}
	c := t.Config
	rows := []row{{fmt.Sprintf("Credits with %.0f%% exact copies at the real rate (R=%.0f/min, N=%d; %d uploads, %d distinct photos, %d copies at the same instant as their original, %d of them received by two instances)",
		100*c.Copies, c.RatePerMinute, c.Instances, t.Uploads, t.Distinct, t.SameInstantPairs, t.PairsOnTwoInstances),
		fmt.Sprintf("%d credits, %d records reused", t.Charged, t.Reused),
		fmt.Sprintf("= %d (one per distinct photo)", t.Distinct), verdict(t.Charged == t.Distinct),
		"a copy was paid for, or a photo never was: see the reuse section"}}
	rows = append(rows, row{"Messages lost, with copies", fmt.Sprint(t.Lost), "0", verdict(t.Lost == 0),
		"uploads with neither a final record nor a dead letter: a bug to investigate"})
	rc := reuseCostOf(t)
	rows = append(rows, row{"AWS cost reuse adds per 1,000 uploads (content ledger items, second GET of paid photos), with copies",
		fmt.Sprintf("$%.5f ($%.5f content ledger, $%.5f GETs)", rc.ContentUSD+rc.GetUSD, rc.ContentUSD, rc.GetUSD), "none set", "info", ""})
	if d := r.RealRate; d != nil {
		rd := reuseCostOf(d)
		rows = append(rows, row{"The same for distinct photos only (the real-rate run)",
			fmt.Sprintf("$%.5f ($%.5f content ledger, $%.5f GETs)", rd.ContentUSD+rd.GetUSD, rd.ContentUSD, rd.GetUSD), "none set", "info", ""})
	}
	return rows
}

func (r *results) reuseSection(p func(string, ...any)) {
	t := r.Reuse
	if t == nil {
		return
	}
	c := t.Config
	p("\n## Paying once per photo: exact copies at the real rate\n\n")
	p("Issue 37's row. The throughput run at the service's real rate, with %.0f%% of the uploads exact copies of an earlier photo under another key (same bytes, so the same SHA-256 of what is sent): every other copy is uploaded at the same instant as its original, its notification sent once an instance has taken the original's (at most 20 ms later), so a second instance receives it while the first is calling; the others copy a photo uploaded three photos earlier. `reuseResults=content` (the default). ", 100*c.Copies)
	p("Which instance first received each message is recorded from the pollers.\n\n")
	throughputSection(p, t)
	rc := reuseCostOf(t)
	p("\n| Reuse | |\n|---|---|\n")
	p("| Distinct photos / credits charged / records reused | %d / %d / %d |\n", t.Distinct, t.Charged, t.Reused)
	p("| Copies sent at the same instant / received first by two different instances / longest gap between the two sends | %d / %d / %.1f ms |\n", t.SameInstantPairs, t.PairsOnTwoInstances, bench.Ms(t.SameInstantGapMax))
	p("| Content ledger per 1,000 uploads: requests / write units (failed conditional writes counted as one) / read units | %d / %.0f / %.0f |\n", rc.Content.Requests, rc.Content.WriteUnits, rc.Content.ReadUnits)
	p("| S3 GETs beyond one per upload, per 1,000 uploads | %.0f |\n", rc.ExtraGets)
	p("| Added AWS cost per 1,000 uploads | $%.5f content ledger + $%.5f GETs = $%.5f |\n", rc.ContentUSD, rc.GetUSD, rc.ContentUSD+rc.GetUSD)
	lines, total := bench.ListPrices.Per1000(r.perImageUsage(t))
	p("| Whole AWS cost per 1,000 uploads, this run (the cost section's method) | %.0f credits + $%.4f |\n", lines[0].Quantity, total)
	p("\nThe content ledger's requests are told apart from the object records' by their partition key (`CONTENT#<sha256>`, `bench.RequestCounter.Prefixes`); their units are in the cost section's DynamoDB lines too. ")
	if o := r.Overhead; o != nil && o.ReuseOffWall.N > 0 {
		p("The time the content identity adds per image is measured in the overhead stage: each image's copy under another key runs through a handler with `reuseResults=off`, interleaved, %+.1f ms at the median (%.1f against %.1f ms): the digest over the bytes sent and the content claim's write (a photo up to 4 MiB is read once: the bytes hashed are the bytes sent).", bench.Ms(o.HandlerWall.Median-o.ReuseOffWall.Median), bench.Ms(o.HandlerWall.Median), bench.Ms(o.ReuseOffWall.Median))
	}
	p("\n")
}
