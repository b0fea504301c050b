package geoapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// MaxCreditsConsumed bounds the credits_consumed figure read as a charge.
// The contract's dearest model costs 3 credits a call; a figure over 300
// times that is a broken field, not a price, and taken as a charge it
// would stop a day's budget or a run over one answer.
const MaxCreditsConsumed = 1000

// maxFigureExcerpt bounds how much of a refused figure is kept or logged.
const maxFigureExcerpt = 200

// Why a credits_consumed figure is refused (PredictOutput.CreditsInvalid).
const (
	CreditsNotANumber = "not a JSON number"
	CreditsNegative   = "negative"
	CreditsFractional = "not a whole number"
	CreditsTooLarge   = "above the bound of MaxCreditsConsumed (1000)"
)

// creditsFigure reads data.credits_consumed: a JSON number holding a whole
// number from 0 to MaxCreditsConsumed (3 and 3.0 alike). Anything else
// gives 0 and the reason it was refused: a string is not a number (the
// contract's field is an integer, and says nothing of strings), and -1 is
// no refund.
func creditsFigure(raw json.RawMessage) (int, string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || !(raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') {
		return 0, CreditsNotANumber
	}
	var n json.Number
	if json.Unmarshal(raw, &n) != nil {
		return 0, CreditsNotANumber
	}
	// Past float64's range Float64 gives an infinity and an error; below
	// it (1e-400), 0 from a mantissa that is not.
	f, err := n.Float64()
	mantissa, _, _ := strings.Cut(strings.ToLower(n.String()), "e")
	switch {
	case f < 0:
		return 0, CreditsNegative
	case f > MaxCreditsConsumed:
		return 0, CreditsTooLarge
	case err != nil, f != math.Trunc(f), f == 0 && strings.ContainsAny(mantissa, "123456789"):
		return 0, CreditsFractional
	}
	return int(f), ""
}

// figureExcerpt is a refused figure as sent, cut to maxFigureExcerpt bytes
// and without the key, for a record or a log line.
func figureExcerpt(raw json.RawMessage, key string) string {
	s := redact(string(bytes.TrimSpace(raw)), key)
	if len(s) > maxFigureExcerpt {
		return fmt.Sprintf("%s… (%d bytes)", excerpt(s, maxFigureExcerpt-20), len(s))
	}
	return s
}
