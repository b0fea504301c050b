package alarmeval

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// A small evaluator for the metric math the stack's alarms use. An
// expression is evaluated one period at a time: every metric id stands for
// its datapoint in that period, which may be missing. A missing operand
// makes the result missing, except inside FILL, which replaces it; so a
// FILLed input has a value in every period of the evaluation range, as it
// does when CloudWatch evaluates the expression over the alarm's range.
//
// Supported: numbers, metric and expression ids, + - * / ^, unary -, the
// comparisons == != < <= > >= (1 or 0), AND/&&, OR/||, NOT/!, parentheses,
// IF(cond, a[, b]) and FILL(m, value). Anything else is refused when the
// template is parsed, so an alarm never silently evaluates to nothing.

// value is one period's datapoint of a series; ok is false when missing.
type value struct {
	v  float64
	ok bool
}

func some(v float64) value { return value{v: v, ok: true} }

var missing = value{}

// node is a parsed expression.
type node interface {
	eval(lookup func(id string) value) value
	// ids appends the metric or expression ids the node reads.
	ids(dst []string) []string
}

type numberNode float64

func (n numberNode) eval(func(string) value) value { return some(float64(n)) }
func (n numberNode) ids(dst []string) []string     { return dst }

type idNode string

func (n idNode) eval(lookup func(string) value) value { return lookup(string(n)) }
func (n idNode) ids(dst []string) []string            { return append(dst, string(n)) }

type unaryNode struct {
	op string // "-" or "NOT"
	x  node
}

func (n unaryNode) eval(lookup func(string) value) value {
	x := n.x.eval(lookup)
	if !x.ok {
		return missing
	}
	if n.op == "-" {
		return some(-x.v)
	}
	return some(truth(x.v == 0))
}

func (n unaryNode) ids(dst []string) []string { return n.x.ids(dst) }

type binaryNode struct {
	op   string
	l, r node
}

func (n binaryNode) eval(lookup func(string) value) value {
	l, r := n.l.eval(lookup), n.r.eval(lookup)
	if !l.ok || !r.ok {
		return missing
	}
	var v float64
	switch n.op {
	case "+":
		v = l.v + r.v
	case "-":
		v = l.v - r.v
	case "*":
		v = l.v * r.v
	case "/":
		v = l.v / r.v
	case "^":
		v = math.Pow(l.v, r.v)
	case "==":
		v = truth(l.v == r.v)
	case "!=":
		v = truth(l.v != r.v)
	case "<":
		v = truth(l.v < r.v)
	case "<=":
		v = truth(l.v <= r.v)
	case ">":
		v = truth(l.v > r.v)
	case ">=":
		v = truth(l.v >= r.v)
	case "AND":
		v = truth(l.v != 0 && r.v != 0)
	case "OR":
		v = truth(l.v != 0 || r.v != 0)
	}
	// CloudWatch drops a datapoint that is not a finite number (x/0).
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return missing
	}
	return some(v)
}

func (n binaryNode) ids(dst []string) []string { return n.r.ids(n.l.ids(dst)) }

// ifNode is IF(cond, a, b); without b a false condition gives no datapoint.
type ifNode struct {
	cond, then, els node
}

func (n ifNode) eval(lookup func(string) value) value {
	c := n.cond.eval(lookup)
	switch {
	case !c.ok:
		return missing
	case c.v != 0:
		return n.then.eval(lookup)
	case n.els != nil:
		return n.els.eval(lookup)
	}
	return missing
}

func (n ifNode) ids(dst []string) []string {
	dst = n.then.ids(n.cond.ids(dst))
	if n.els != nil {
		dst = n.els.ids(dst)
	}
	return dst
}

// fillNode is FILL(m, value).
type fillNode struct {
	x, fill node
}

func (n fillNode) eval(lookup func(string) value) value {
	if x := n.x.eval(lookup); x.ok {
		return x
	}
	return n.fill.eval(lookup)
}

func (n fillNode) ids(dst []string) []string { return n.fill.ids(n.x.ids(dst)) }

func truth(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// parseExpression parses a metric math expression.
func parseExpression(src string) (node, error) {
	toks, err := tokenize(src)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	n, err := p.or()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tokEOF {
		return nil, fmt.Errorf("unexpected %q at offset %d", t.text, t.pos)
	}
	return n, nil
}

type tokKind int

const (
	tokEOF tokKind = iota
	tokNumber
	tokIdent
	tokOp
	tokString
)

type token struct {
	kind tokKind
	text string
	pos  int
}

func tokenize(src string) ([]token, error) {
	var toks []token
	for i := 0; i < len(src); {
		c := rune(src[i])
		switch {
		case unicode.IsSpace(c):
			i++
		case c >= '0' && c <= '9' || c == '.':
			j := i
			for j < len(src) && (src[j] >= '0' && src[j] <= '9' || src[j] == '.' || src[j] == 'e' || src[j] == 'E' ||
				(src[j] == '-' || src[j] == '+') && j > i && (src[j-1] == 'e' || src[j-1] == 'E')) {
				j++
			}
			toks = append(toks, token{tokNumber, src[i:j], i})
			i = j
		case c == '_' || unicode.IsLetter(c):
			j := i
			for j < len(src) && (src[j] == '_' || unicode.IsLetter(rune(src[j])) || unicode.IsDigit(rune(src[j]))) {
				j++
			}
			toks = append(toks, token{tokIdent, src[i:j], i})
			i = j
		case c == '"' || c == '\'':
			// Strings only appear in functions this evaluator refuses
			// (SEARCH, METRICS); tokenize them so the error names the function.
			j := strings.IndexByte(src[i+1:], src[i])
			if j < 0 {
				return nil, fmt.Errorf("unterminated string at offset %d", i)
			}
			toks = append(toks, token{tokString, src[i : i+j+2], i})
			i += j + 2
		default:
			op := ""
			for _, cand := range []string{"==", "!=", "<=", ">=", "&&", "||", "+", "-", "*", "/", "^", "<", ">", "!", "(", ")", ","} {
				if strings.HasPrefix(src[i:], cand) {
					op = cand
					break
				}
			}
			if op == "" {
				return nil, fmt.Errorf("unexpected character %q at offset %d", c, i)
			}
			toks = append(toks, token{tokOp, op, i})
			i += len(op)
		}
	}
	return append(toks, token{kind: tokEOF, text: "end of expression", pos: len(src)}), nil
}

type parser struct {
	toks []token
	i    int
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) next() token { t := p.toks[p.i]; p.i++; return t }

// accept consumes the next token if it is one of ops (keywords compare
// case-insensitively) and returns its canonical form.
func (p *parser) accept(ops ...string) (string, bool) {
	t := p.peek()
	if t.kind != tokOp && t.kind != tokIdent {
		return "", false
	}
	for _, op := range ops {
		if t.text == op || t.kind == tokIdent && strings.EqualFold(t.text, op) {
			p.i++
			switch op {
			case "&&":
				return "AND", true
			case "||":
				return "OR", true
			case "!":
				return "NOT", true
			}
			return strings.ToUpper(op), true
		}
	}
	return "", false
}

func (p *parser) expect(op string) error {
	if t := p.next(); t.text != op {
		return fmt.Errorf("expected %q at offset %d, found %q", op, t.pos, t.text)
	}
	return nil
}

func (p *parser) binaryLevel(next func() (node, error), ops ...string) (node, error) {
	l, err := next()
	if err != nil {
		return nil, err
	}
	for {
		op, ok := p.accept(ops...)
		if !ok {
			return l, nil
		}
		r, err := next()
		if err != nil {
			return nil, err
		}
		l = binaryNode{op: op, l: l, r: r}
	}
}

func (p *parser) or() (node, error)  { return p.binaryLevel(p.and, "OR", "||") }
func (p *parser) and() (node, error) { return p.binaryLevel(p.not, "AND", "&&") }

func (p *parser) not() (node, error) {
	if _, ok := p.accept("NOT", "!"); ok {
		x, err := p.not()
		if err != nil {
			return nil, err
		}
		return unaryNode{op: "NOT", x: x}, nil
	}
	return p.comparison()
}

func (p *parser) comparison() (node, error) {
	return p.binaryLevel(p.additive, "==", "!=", "<=", ">=", "<", ">")
}
func (p *parser) additive() (node, error) { return p.binaryLevel(p.multiplicative, "+", "-") }
func (p *parser) multiplicative() (node, error) {
	return p.binaryLevel(p.unary, "*", "/")
}

func (p *parser) unary() (node, error) {
	if _, ok := p.accept("-"); ok {
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		return unaryNode{op: "-", x: x}, nil
	}
	return p.power()
}

func (p *parser) power() (node, error) {
	base, err := p.primary()
	if err != nil {
		return nil, err
	}
	if _, ok := p.accept("^"); ok {
		exp, err := p.unary() // right-associative
		if err != nil {
			return nil, err
		}
		return binaryNode{op: "^", l: base, r: exp}, nil
	}
	return base, nil
}

func (p *parser) primary() (node, error) {
	t := p.next()
	switch {
	case t.kind == tokNumber:
		f, err := strconv.ParseFloat(t.text, 64)
		if err != nil {
			return nil, fmt.Errorf("bad number %q at offset %d", t.text, t.pos)
		}
		return numberNode(f), nil
	case t.kind == tokOp && t.text == "(":
		n, err := p.or()
		if err != nil {
			return nil, err
		}
		return n, p.expect(")")
	case t.kind == tokIdent && p.peek().text == "(":
		return p.call(t)
	case t.kind == tokIdent:
		return idNode(t.text), nil
	}
	return nil, fmt.Errorf("unexpected %q at offset %d", t.text, t.pos)
}

func (p *parser) call(fn token) (node, error) {
	p.next() // "("
	var args []node
	if p.peek().text != ")" {
		for {
			if t := p.peek(); t.kind == tokIdent && (strings.EqualFold(t.text, "REPEAT") || strings.EqualFold(t.text, "LINEAR")) {
				return nil, fmt.Errorf("%s(..., %s) is not supported", strings.ToUpper(fn.text), strings.ToUpper(t.text))
			}
			if t := p.peek(); t.kind == tokString {
				return nil, fmt.Errorf("function %s is not supported", strings.ToUpper(fn.text))
			}
			a, err := p.or()
			if err != nil {
				return nil, err
			}
			args = append(args, a)
			if _, ok := p.accept(","); !ok {
				break
			}
		}
	}
	if err := p.expect(")"); err != nil {
		return nil, err
	}
	name := strings.ToUpper(fn.text)
	switch {
	case name == "IF" && len(args) == 3:
		return ifNode{cond: args[0], then: args[1], els: args[2]}, nil
	case name == "IF" && len(args) == 2:
		return ifNode{cond: args[0], then: args[1]}, nil
	case name == "FILL" && len(args) == 2:
		return fillNode{x: args[0], fill: args[1]}, nil
	case name == "IF" || name == "FILL":
		return nil, fmt.Errorf("%s with %d arguments at offset %d", name, len(args), fn.pos)
	}
	return nil, fmt.Errorf("function %s at offset %d is not supported", name, fn.pos)
}
