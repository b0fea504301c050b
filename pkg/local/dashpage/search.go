package dashpage

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/alarmeval"
)

// search is a SEARCH expression in the form the stack uses:
// SEARCH('{Namespace,Dim1,Dim2} MetricName="Name" Dim1="value"', 'Stat', period).
// The schema in braces keeps the metrics with exactly those dimensions;
// each Key="value" term keeps those whose MetricName or dimension has that
// exact value. CloudWatch's partial matching of bare words, boolean
// operators and searches without a MetricName are not modelled.
type search struct {
	Namespace  string
	SchemaDims []string
	MetricName string
	Terms      map[string]string
	Stat       alarmeval.Statistic
	Period     time.Duration
}

var (
	searchCall = regexp.MustCompile(`^\s*SEARCH\(\s*'([^']*)'\s*,\s*'([^']*)'\s*,\s*(\d+)\s*\)\s*$`)
	searchTerm = regexp.MustCompile(`^([A-Za-z0-9_.:/-]+)=(?:"([^"]*)"|([^\s"]+))$`)
)

// isSearch reports whether an expression is a SEARCH, which alarmeval's
// metric math does not evaluate.
func isSearch(expression string) bool {
	return strings.HasPrefix(strings.TrimSpace(expression), "SEARCH(")
}

func parseSearch(expression string) (search, error) {
	m := searchCall.FindStringSubmatch(expression)
	if m == nil {
		return search{}, fmt.Errorf("not SEARCH('query', 'statistic', period)")
	}
	stat, err := alarmeval.ParseStatistic(m[2])
	if err != nil {
		return search{}, err
	}
	seconds, _ := strconv.Atoi(m[3])
	s := search{Stat: stat, Period: time.Duration(seconds) * time.Second, Terms: map[string]string{}}
	query := strings.TrimSpace(m[1])
	if strings.HasPrefix(query, "{") {
		end := strings.Index(query, "}")
		if end < 0 {
			return search{}, fmt.Errorf("schema without a closing brace")
		}
		schema := strings.Split(query[1:end], ",")
		s.Namespace = strings.TrimSpace(schema[0])
		for _, d := range schema[1:] {
			s.SchemaDims = append(s.SchemaDims, strings.TrimSpace(d))
		}
		query = query[end+1:]
	}
	for _, field := range strings.Fields(query) {
		t := searchTerm.FindStringSubmatch(field)
		if t == nil {
			return search{}, fmt.Errorf("term %q: only Key=\"value\" terms are evaluated locally", field)
		}
		value := t[2] + t[3]
		switch t[1] {
		case "MetricName":
			s.MetricName = value
		case "Namespace":
			s.Namespace = value
		default:
			s.Terms[t[1]] = value
		}
	}
	if s.Namespace == "" || s.MetricName == "" {
		return search{}, fmt.Errorf("only a search with a namespace and a MetricName is evaluated locally")
	}
	return s, nil
}

// metrics returns the stored metrics the search finds.
func (s search) metrics(store *alarmeval.Store) []alarmeval.Metric {
	var out []alarmeval.Metric
	for _, dims := range store.DimensionSets(s.Namespace, s.MetricName) {
		if s.SchemaDims != nil && !slices.Equal(slices.Sorted(maps.Keys(dims)), slices.Sorted(slices.Values(s.SchemaDims))) {
			continue
		}
		matches := true
		for k, v := range s.Terms {
			matches = matches && dims[k] == v
		}
		if !matches {
			continue
		}
		m := alarmeval.Metric{Namespace: s.Namespace, MetricName: s.MetricName}
		for _, k := range slices.Sorted(maps.Keys(dims)) {
			m.Dimensions = append(m.Dimensions, alarmeval.Dimension{Name: k, Value: dims[k]})
		}
		out = append(out, m)
	}
	return out
}

var propLabel = regexp.MustCompile(`\$\{PROP\('([^']+)'\)\}`)

// searchLabel expands the dynamic label CloudWatch gives each result,
// ${PROP('Dim.<name>')}, ${PROP('MetricName')} and ${PROP('Namespace')};
// an empty label names the metric.
func searchLabel(label string, m alarmeval.Metric) string {
	if label == "" {
		return m.String()
	}
	return propLabel.ReplaceAllStringFunc(label, func(s string) string {
		prop := propLabel.FindStringSubmatch(s)[1]
		switch {
		case prop == "MetricName":
			return m.MetricName
		case prop == "Namespace":
			return m.Namespace
		case strings.HasPrefix(prop, "Dim."):
			for _, d := range m.Dimensions {
				if d.Name == prop[len("Dim."):] {
					return d.Value
				}
			}
		}
		return s
	})
}
