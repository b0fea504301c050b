package geosim

import (
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Paths of the contract's endpoints.
const (
	PathPredict = "/v1/prediction/predict"
	PathModels  = "/v1/prediction/models"
	PathCredits = "/v1/credits/summary"
)

// KeyHeader carries the API key: the contract's header, the default of
// Config.KeyHeader.
const KeyHeader = "X-Service-Key"

// Server simulates the geolocation service. It is an http.Handler and is safe
// for concurrent use; every setter can be called while requests are served.
type Server struct {
	cfg     Config
	mux     *http.ServeMux
	demoKey string
	// keysOnlyOnPredict starts as Config.KeysOnlyOnPredict; see
	// SetKeysOnlyOnPredict.
	keysOnlyOnPredict atomic.Bool

	mu            sync.Mutex        // guards everything below
	truth         map[string]center // true positions by received SHA-256 (SetTruth)
	accounts      map[string]*account
	keys          map[string]*apiKey // by key value
	keySeq        int
	models        []Model
	defaultModel  string
	limiterKind   Limiter
	ratePerMinute float64
	rateBurst     int
	limiters      map[string]rateLimiter // by rate key; nil entry: unlimited
	faults        Faults
	stormUntil    time.Time
	rng           *rand.Rand // fault decisions; seeded
	calls         []Call
	modelsLayout  ModelsLayout
	creditsLayout CreditsLayout
}

// New returns a simulator with the default catalogue and one organisation
// (Config.Org, "demo" by default) holding one key, DemoKey.
func New(optFns ...func(*Config)) *Server {
	var cfg Config
	for _, fn := range optFns {
		fn(&cfg)
	}
	cfg.setDefaults()
	s := &Server{
		cfg:           cfg,
		accounts:      map[string]*account{},
		keys:          map[string]*apiKey{},
		models:        defaultCatalogue(),
		defaultModel:  ModelGlobalDefault,
		limiterKind:   cfg.Limiter,
		ratePerMinute: cfg.RatePerMinute,
		rateBurst:     cfg.RateBurst,
		limiters:      map[string]rateLimiter{},
		rng:           newRand(cfg.Seed),
	}
	if cfg.backend() {
		s.modelsLayout = ModelsLayoutBackend
	}
	s.keysOnlyOnPredict.Store(*cfg.KeysOnlyOnPredict)
	demoKey := cfg.DemoKey
	if demoKey == "" {
		demoKey = newKeyValue()
	} else if !strings.HasPrefix(demoKey, KeyPrefix) {
		// A programming error in a test: such a key could never authenticate.
		panic("geosim: Config.DemoKey must start with " + KeyPrefix)
	}
	s.demoKey = s.issueKeyLocked(cfg.Org, DefaultKeyName, demoKey)
	a := s.accountLocked(cfg.Org)
	a.allowance, a.topUp = cfg.Allowance, cfg.TopUp
	a.granted[ModelPropertyWL] = true

	s.mux = http.NewServeMux()
	s.mux.HandleFunc("POST "+PathPredict, s.handlePredict)
	s.mux.HandleFunc("GET "+PathModels, s.handleModels)
	s.mux.HandleFunc("GET "+PathCredits, s.handleCredits)
	return s
}

// SetKeysOnlyOnPredict switches the refusal of keys off predict at run
// time, as a service changing its policy would.
func (s *Server) SetKeysOnlyOnPredict(on bool) { s.keysOnlyOnPredict.Store(on) }

// ServeHTTP implements http.Handler. Every answer carries the Date header
// of the service's own clock (Config.Now, ClockOffset included), stamped as
// the request arrives: net/http would stamp the machine's clock, and a
// client learning where the service's seconds begin reads this header.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Date", s.cfg.Now().UTC().Format(http.TimeFormat))
	s.mux.ServeHTTP(w, r)
}
