package geoapi

import (
	"context"
	"encoding/json"
	"net/http"
)

// CreditsInput is the input of Credits.
type CreditsInput struct {
	// APIKey overrides Options.APIKey; a key is required.
	APIKey string
	// RemainingPath is an optional dotted JSON path to the remaining-credits
	// figure, such as "data.summary.total_available" or "items.0.left".
	// When set it is the only source of Remaining.
	RemainingPath string
}

// CreditsOutput is the result of Credits. The contract does not name the
// summary's fields, so each figure is nil unless it was found.
type CreditsOutput struct {
	// Remaining is the credits left to spend.
	Remaining *float64
	// RemainingPath says where Remaining came from: a dotted path, or a
	// formula over paths when it was derived.
	RemainingPath string

	SubscriptionAllowance *float64
	SubscriptionRemaining *float64
	SubscriptionUsed      *float64
	TopUpBalance          *float64
	Used                  *float64
	Total                 *float64

	// Refused lists the figures found and not read (not a JSON number, or
	// outside MinCreditFigure to MaxCreditFigure): each is left nil above.
	Refused []FigureRefusal

	// Raw is the response body.
	Raw      json.RawMessage
	Attempts int
}

// Credits reads the account's credit summary (GET /v1/credits/summary).
func (c *Client) Credits(ctx context.Context, in *CreditsInput, optFns ...func(*Options)) (*CreditsOutput, error) {
	const opName = opCredits
	if in == nil {
		in = &CreditsInput{}
	}
	o, base, key, err := c.prepare(optFns, in.APIKey, true)
	if err != nil {
		return nil, err
	}
	resp, err := c.invoke(ctx, &o, base, &operation{
		name: opName, method: http.MethodGet, path: "/v1/credits/summary", apiKey: key,
	})
	if err != nil {
		return nil, err
	}
	out, err := parseCredits(resp.body, in.RemainingPath)
	if err != nil {
		// Described again from a body without the key (see Models).
		if _, rerr := parseCredits(redactBody(resp.body, key), in.RemainingPath); rerr != nil {
			err = rerr
		}
		return nil, asDecodeError(opName, resp, err, key)
	}
	for i := range out.Refused {
		out.Refused[i].Value = redact(out.Refused[i].Value, key)
	}
	out.Attempts = resp.attempts
	return out, nil
}
