module example.com/server/v3

go 1.25.0

toolchain go1.26.10

require (
	example.com/api/v3 v3.0.0
	example.com/client/v3 v3.0.0
	github.com/other/lib v1.2.0
)

replace (
	example.com/api/v3 => ../api
	example.com/client/v3 => ../client/v3
)

// Not required: must not be carried over.
replace example.com/forbidden => ./FORBIDDEN_DEPENDENCY

replace github.com/other/lib => github.com/fork/lib v1.2.1-fix
