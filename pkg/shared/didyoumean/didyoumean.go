// Package didyoumean names the word a typo was meant to be: the CDK app's
// unknown setting (-c alarmEmial=...), the CLI's unknown command
// (geolocate stauts) and unknown flag (results --sinse). One rule for all,
// so every "did you mean" of the project agrees on what a typo is.
package didyoumean

import "strings"

// Closest is the candidate nearest to word by edit distance (case ignored,
// a swap of two adjacent letters counting as one edit), if it is within a
// third of word's length: a typo, not a different word. It is "" when none
// is near enough; among equally near candidates, the first wins.
func Closest(word string, candidates []string) string {
	best, bestDist := "", len(word)/3+1
	lw := strings.ToLower(word)
	for _, c := range candidates {
		if d := Distance(lw, strings.ToLower(c)); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// Distance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and swaps of adjacent bytes.
func Distance(a, b string) int {
	prev2, prev, cur := make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
