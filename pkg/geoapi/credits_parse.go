package geoapi

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// Field names recognised in a credit summary, in order of preference. Each
// is looked up under "data" first, then at the top level.
var (
	directRemainingKeys = []string{"credits_remaining", "remaining", "summary.total_available",
		"total_available", "summary.remaining", "balance"}
	directUsedKeys       = []string{"credits_used", "used", "summary.used"}
	directTotalKeys      = []string{"credits_total", "total", "summary.total"}
	subscriptionKeys     = []string{"subscription", "plan"}
	subAllowanceKeys     = []string{"allowance", "total", "credits"}
	subRemainingKeys     = []string{"remaining", "credits_remaining"}
	subUsedKeys          = []string{"used", "credits_used"}
	topUpKeys            = []string{"topups", "topup", "top_up", "top_ups"}
	topUpBalanceKeys     = []string{"balance", "remaining", "total"}
	creditsWrapperPrefix = []string{"data.", ""}
)

// The range of a credit summary figure. A balance is a count of credits:
// never negative, and never near the limits of what the monitor hands it
// to: CloudWatch takes values "in the range of -2^360 to 2^360"
// (PutMetricData, MetricDatum Value; its older text, 8.515920e-109 to
// 1.174271e+108, refused tiny values too) and DynamoDB numbers from 1E-130
// to 9.9999999999999999999999999999999999999E+125 with up to 38 digits
// (Developer Guide, "Supported data types and naming rules"). 10^15 credits
// is past any account, and every whole number up to it is exact in a
// float64; a non-zero figure below a millionth of a credit is no balance.
const (
	MaxCreditFigure = 1e15
	MinCreditFigure = 1e-6
)

// FigureRefusal is a figure of the credit summary that was found and not
// read: not a JSON number, or outside the range above.
type FigureRefusal struct {
	// Path is where it was found (a dotted path, or the formula of a
	// derived figure).
	Path string `json:"path"`
	// Value is the figure as sent (JSON text, at most 200 bytes, without
	// the key).
	Value  string `json:"value"`
	Reason string `json:"reason"`
}

func (r FigureRefusal) String() string {
	return fmt.Sprintf("%s = %s: %s", r.Path, r.Value, r.Reason)
}

// creditFigure reads one figure: a JSON number (the contract shows no
// layout at all and says nothing of strings, so "1000" is not read as one),
// 0 or from MinCreditFigure to MaxCreditFigure. Otherwise it gives the
// reason it refused v.
func creditFigure(v any) (float64, string) {
	n, ok := v.(json.Number)
	if !ok {
		if _, isString := v.(string); isString {
			return 0, "a JSON string, not a number"
		}
		return 0, "not a JSON number"
	}
	f, err := n.Float64()
	return f, figureRange(f, err)
}

// figureRange is why f (err: its parse error) is outside the range, "" when
// it is within.
func figureRange(f float64, err error) string {
	switch {
	case f < 0:
		return "negative"
	case err != nil || f > MaxCreditFigure:
		return "above 10^15"
	case f != 0 && f < MinCreditFigure:
		return "below 10^-6"
	}
	return ""
}

// CheckCreditFigure is nil when f is a credit balance within the range a
// summary's figure is read in (0, or MinCreditFigure to MaxCreditFigure),
// else an error saying why not: for a balance from elsewhere (one an
// operator declares) to meet the same bounds.
func CheckCreditFigure(f float64) error {
	if why := figureRange(f, nil); why != "" || f != f {
		if why == "" {
			why = "not a number"
		}
		return fmt.Errorf("%v credits: %s (a balance is 0, or from 10^-6 to 10^15)", f, why)
	}
	return nil
}

// figureText is v as JSON text, cut to maxFigureExcerpt bytes.
func figureText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return figureExcerpt(b, "")
}

// parseCredits extracts what it can from a credit summary. It never invents
// a figure: when no remaining figure is found or derivable it returns a
// *LayoutError listing the keys it saw, or a *FigureError when one was found
// and refused; other refused figures are left out and listed in Refused.
func parseCredits(body []byte, remainingPath string) (*CreditsOutput, error) {
	root, err := decodeAny(body)
	if err != nil {
		return nil, err
	}
	out := &CreditsOutput{Raw: body}
	refuse := func(path string, v any, reason string) {
		out.Refused = append(out.Refused, FigureRefusal{Path: path, Value: figureText(v), Reason: reason})
	}
	find := func(paths ...string) (*float64, string) {
		for _, prefix := range creditsWrapperPrefix {
			for _, p := range paths {
				v, ok := lookup(root, prefix+p)
				if !ok {
					continue
				}
				f, why := creditFigure(v)
				if why != "" {
					refuse(prefix+p, v, why)
					continue
				}
				return &f, prefix + p
			}
		}
		return nil, ""
	}
	nested := func(parents, children []string) (*float64, string) {
		var paths []string
		for _, p := range parents {
			for _, c := range children {
				paths = append(paths, p+"."+c)
			}
		}
		return find(paths...)
	}
	// derived is a remaining figure computed from others, checked against
	// the same range: two figures in range can add up past it.
	derived := func(r float64, path string) bool {
		if why := figureRange(r, nil); why != "" {
			refuse(path, json.Number(strconv.FormatFloat(r, 'g', -1, 64)), why)
			return false
		}
		out.Remaining, out.RemainingPath = &r, path
		return true
	}

	var subRemainingPath, subAllowancePath, subUsedPath, topUpPath string
	out.SubscriptionAllowance, subAllowancePath = nested(subscriptionKeys, subAllowanceKeys)
	out.SubscriptionRemaining, subRemainingPath = nested(subscriptionKeys, subRemainingKeys)
	out.SubscriptionUsed, subUsedPath = nested(subscriptionKeys, subUsedKeys)
	out.TopUpBalance, topUpPath = nested(topUpKeys, topUpBalanceKeys)
	out.Used, _ = find(directUsedKeys...)
	if out.Used == nil {
		out.Used = out.SubscriptionUsed
	}
	out.Total, _ = find(directTotalKeys...)

	switch {
	case remainingPath != "":
		v, ok := lookup(root, remainingPath)
		if !ok {
			return nil, &LayoutError{Missing: fmt.Sprintf("value at configured path %q", remainingPath), Keys: keysSeen(root, 3)}
		}
		f, why := creditFigure(v)
		if why != "" {
			return nil, &FigureError{Refusal: FigureRefusal{Path: remainingPath, Value: figureText(v), Reason: why}}
		}
		out.Remaining, out.RemainingPath = &f, remainingPath
	default:
		refusedBefore := len(out.Refused)
		if r, path := find(directRemainingKeys...); r != nil {
			out.Remaining, out.RemainingPath = r, path
			break
		}
		if out.SubscriptionRemaining != nil && out.TopUpBalance != nil &&
			derived(*out.SubscriptionRemaining+*out.TopUpBalance, subRemainingPath+" + "+topUpPath) {
			break
		}
		if out.SubscriptionAllowance != nil && out.SubscriptionUsed != nil && out.TopUpBalance != nil &&
			derived(*out.SubscriptionAllowance-*out.SubscriptionUsed+*out.TopUpBalance, subAllowancePath+" - "+subUsedPath+" + "+topUpPath) {
			break
		}
		if len(out.Refused) > refusedBefore {
			// A remaining figure was there and refused: say so, not that
			// the layout is unknown.
			return nil, &FigureError{Refusal: out.Refused[refusedBefore]}
		}
		return nil, &LayoutError{Missing: "remaining credits (set a remaining-credits path)", Keys: keysSeen(root, 3)}
	}
	return out, nil
}
