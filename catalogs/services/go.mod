module cozystack.io/catalogs/services

go 1.26.0
