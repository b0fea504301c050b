package monitor

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
	Warnings []string        `json:"warnings,omitempty"`
	Credits  *CreditsReading `json:"credits,omitempty"`
	Forecast *ForecastResult `json:"forecast,omitempty"`
	Models   *ModelsReading  `json:"models,omitempty"`
}

// CreditsReading is the credit summary as read from the service.
type CreditsReading struct {
	Remaining float64 `json:"remaining"`
	// RemainingPath says where in the summary Remaining was found.
	RemainingPath string `json:"remaining_path"`
	// Subscription is the remaining subscription allowance and TopUp the
	// top-up balance, when the summary shows them.
	Subscription *float64 `json:"subscription,omitempty"`
	TopUp        *float64 `json:"top_up,omitempty"`
}

// ModelsReading is the model list as the key sees it.
type ModelsReading struct {
	Ready   int          `json:"ready"`
	Down    int          `json:"down"`
	Unknown int          `json:"unknown"`
	Models  []ModelState `json:"models"`
	// ConfiguredModel is GEO_MODEL_ID, empty for the default path.
	ConfiguredModel string `json:"configured_model,omitempty"`
	// ConfiguredAvailable is the ConfiguredModelAvailable metric.
	ConfiguredAvailable bool `json:"configured_available"`
}

// ModelState is one listed model.
type ModelState struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}
