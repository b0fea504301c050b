package geoapi

import (
	"fmt"
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

// parseCredits extracts what it can from a credit summary. It never invents
// a figure: when no remaining figure is found or derivable it returns a
// *LayoutError listing the keys it saw.
func parseCredits(body []byte, remainingPath string) (*CreditsOutput, error) {
	root, err := decodeAny(body)
	if err != nil {
		return nil, err
	}
	out := &CreditsOutput{Raw: body}
	find := func(paths ...string) (*float64, string) {
		for _, prefix := range creditsWrapperPrefix {
			for _, p := range paths {
				if v, ok := lookup(root, prefix+p); ok {
					if f, ok := toNumber(v); ok {
						return &f, prefix + p
					}
				}
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
		f, ok := toNumber(v)
		if !ok {
			return nil, &LayoutError{Missing: fmt.Sprintf("number at configured path %q", remainingPath), Keys: keysSeen(root, 3)}
		}
		out.Remaining, out.RemainingPath = &f, remainingPath
	default:
		if r, path := find(directRemainingKeys...); r != nil {
			out.Remaining, out.RemainingPath = r, path
			break
		}
		if out.SubscriptionRemaining != nil && out.TopUpBalance != nil {
			r := *out.SubscriptionRemaining + *out.TopUpBalance
			out.Remaining, out.RemainingPath = &r, subRemainingPath+" + "+topUpPath
			break
		}
		if out.SubscriptionAllowance != nil && out.SubscriptionUsed != nil && out.TopUpBalance != nil {
			r := *out.SubscriptionAllowance - *out.SubscriptionUsed + *out.TopUpBalance
			out.Remaining, out.RemainingPath = &r, subAllowancePath+" - "+subUsedPath+" + "+topUpPath
			break
		}
		return nil, &LayoutError{Missing: "remaining credits (set a remaining-credits path)", Keys: keysSeen(root, 3)}
	}
	return out, nil
}
