package conformance

import "testing"

func TestArticle(t *testing.T) {
	for _, tc := range []struct {
		word   string
		want   string
		reason string
	}{
		{
			word:   "Info",
			want:   "an",
			reason: "a vowel letter",
		},
		{
			word:   "Ingress",
			want:   "an",
			reason: "a vowel letter",
		},
		{
			word:   "Etcd",
			want:   "an",
			reason: "a vowel letter",
		},
		{
			word:   "ExternalDNS",
			want:   "an",
			reason: "a vowel letter",
		},
		{
			word:   "OpenBAO",
			want:   "an",
			reason: "a vowel letter",
		},
		{
			word:   "application",
			want:   "an",
			reason: "a vowel letter",
		},
		{
			word:   "Unmanaged",
			want:   "an",
			reason: "a vowel letter",
		},
		{
			word:   "uninstall",
			want:   "an",
			reason: "a vowel letter",
		},
		{
			word:   "Unit",
			want:   "a",
			reason: "a vowel letter sounding like a consonant",
		},
		{
			word:   "UserGroup",
			want:   "a",
			reason: "a vowel letter sounding like a consonant",
		},
		{
			word:   "Union",
			want:   "a",
			reason: "a vowel letter sounding like a consonant",
		},
		{
			word:   "one-off",
			want:   "a",
			reason: "a vowel letter sounding like a consonant",
		},
		{
			word:   "EuroDNS",
			want:   "a",
			reason: "a vowel letter sounding like a consonant",
		},
		{
			word:   "Uranium",
			want:   "a",
			reason: "a vowel letter sounding like a consonant",
		},
		{
			word:   "Postgres",
			want:   "a",
			reason: "a consonant letter",
		},
		{
			word:   "BootBox",
			want:   "a",
			reason: "a consonant letter",
		},
		{
			word:   "NATS",
			want:   "a",
			reason: "a consonant letter",
		},
		{
			word:   "VMDisk",
			want:   "a",
			reason: "a consonant letter",
		},
		{
			word:   "Tenant",
			want:   "a",
			reason: "a consonant letter",
		},
		{
			word:   "x",
			want:   "a",
			reason: "a consonant letter",
		},
		{
			word:   "",
			want:   "a",
			reason: "no word: the default article",
		},
		{
			word:   "Hourly",
			want:   "an",
			reason: "a silent h",
		},
		{
			word:   "honest",
			want:   "an",
			reason: "a silent h",
		},
		{
			word:   "HTTPCache",
			want:   "an",
			reason: "an initialism read letter by letter, its first letter's name starting with a vowel",
		},
		{
			word:   "SSHKey",
			want:   "an",
			reason: "an initialism read letter by letter, its first letter's name starting with a vowel",
		},
		{
			word:   "S3Bucket",
			want:   "an",
			reason: "an initialism read letter by letter, its first letter's name starting with a vowel",
		},
		{
			word:   "Host",
			want:   "a",
			reason: "a sounded h",
		},
	} {
		if got := article(tc.word); got != tc.want {
			t.Errorf("article(%q) = %q, want %q: %s", tc.word, got, tc.want, tc.reason)
		}
	}
}
