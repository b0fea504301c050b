package monitor

import (
	"time"

	"github.com/geolocate-aws/geolocate/pkg/geoapi"
)

// Report is what one run saw; the handler returns it (a local run prints it).
// Figures that could not be read are absent, never zero-filled.
type Report struct {
	// Healthy is the MonitorHealthy heartbeat: true only when the key, both
	// endpoints, the history and the forecast inputs were all read.
	Healthy bool `json:"healthy"`
	// Reasons lists why the run was not healthy, one line per problem,
	// prefixed by the step ("credits: ...", "models: ...").
	Reasons []string `json:"reasons,omitempty"`
	// Warnings are notable but healthy conditions (history disabled, the
	// configured model down or retired).
	Warnings []string `json:"warnings,omitempty"`
	// CreditNote explains, once, where the credit figures come from when
	// the credit summary takes no API keys (the known state of the public
	// backend): an estimate and its anchor, or that no balance is known.
	CreditNote string `json:"credit_note,omitempty"`
	// SummaryReadable is whether the credit summary took the key: false
	// when the service refuses keys on it; nil when the call failed.
	SummaryReadable *bool           `json:"summary_readable,omitempty"`
	Credits         *CreditsReading `json:"credits,omitempty"`
	Forecast        *ForecastResult `json:"forecast,omitempty"`
	Models          *ModelsReading  `json:"models,omitempty"`
	// Jobs are the backfill and reprocess jobs; nil without a job store
	// (no TABLE_NAME) or when they could not be read.
	Jobs *JobsReading `json:"jobs,omitempty"`
}

// CreditsReading is the credit balance: read from the summary, or
// estimated while the summary takes no API keys (Source).
type CreditsReading struct {
	Remaining float64 `json:"remaining"`
	// Source is SourceSummary or SourceEstimate.
	Source CreditSource `json:"source"`
	// RemainingPath says where in the summary Remaining was found
	// ("estimate" for an estimate).
	RemainingPath string `json:"remaining_path"`
	// For an estimate: the anchor it starts from (SourceSummary: the last
	// balance read; SourceDeclared: the operator's), when, and what the
	// records show since: credits consumed, and calls that may have charged.
	AnchorSource    CreditSource `json:"anchor_source,omitempty"`
	AnchorAt        time.Time    `json:"anchor_at,omitzero"`
	AnchorRemaining *float64     `json:"anchor_remaining,omitempty"`
	ConsumedSince   *int         `json:"consumed_since,omitempty"`
	UncertainCalls  *int         `json:"uncertain_calls,omitempty"`
	// Subscription is the remaining subscription allowance and TopUp the
	// top-up balance, when the summary shows them.
	Subscription *float64 `json:"subscription,omitempty"`
	TopUp        *float64 `json:"top_up,omitempty"`
	// Refused lists the summary's figures found and not read (not a JSON
	// number, or outside geoapi's range): none is published.
	Refused []geoapi.FigureRefusal `json:"refused,omitempty"`
}

// ModelsReading is the model list as the key sees it.
type ModelsReading struct {
	// Ready, Down and Unknown count the whole list, Listed its ids.
	Ready   int `json:"ready"`
	Down    int `json:"down"`
	Unknown int `json:"unknown"`
	Listed  int `json:"listed"`
	// Models are the ones published (ModelReady by ModelId): every listed
	// model, or only those the pipeline uses when the list holds more
	// than MaxModelsPublished.
	Models []ModelState `json:"models"`
	// Refused counts the entries the client left out (an id over
	// geoapi.MaxModelIDBytes, a record without an id); LeftOut the listed
	// ids not published, with those (the ModelIdsLeftOut metric).
	Refused int `json:"refused,omitempty"`
	LeftOut int `json:"left_out,omitempty"`
	// ConfiguredModel is GEO_MODEL_ID, empty for the default path.
	ConfiguredModel string `json:"configured_model,omitempty"`
	// ConfiguredAvailable is the ConfiguredModelAvailable metric.
	ConfiguredAvailable bool `json:"configured_available"`
	// PublicOnly: the service refused the key on the model list, so this
	// is the public list (whitelist models granted to the account are not
	// in it).
	PublicOnly bool `json:"public_only,omitempty"`
	// ConfiguredUnknown: the configured model is absent from a public-only
	// list, so whether it is available is not known; the metric is not
	// published.
	ConfiguredUnknown bool `json:"configured_unknown,omitempty"`
	// Watched: the list was compared with the last run's (the results
	// table is configured and was read); New holds the models that became
	// available since, in the list or as the default.
	Watched bool             `json:"watched,omitempty"`
	New     []ModelAvailable `json:"new,omitempty"`
}

// ModelState is one listed model.
type ModelState struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}
