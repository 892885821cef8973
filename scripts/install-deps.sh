#!/usr/bin/env bash
# Installs what the pools and the tests need on a fresh Debian machine:
# Python 3 (Python pools), R with jsonlite (R pools), g++ and nlohmann-json
# (C++ pools). Only what is missing is installed.
set -euo pipefail
need=()
command -v python3 >/dev/null || need+=(python3)
command -v Rscript >/dev/null || need+=(r-base-core)
Rscript -e 'library(jsonlite)' >/dev/null 2>&1 || need+=(r-cran-jsonlite)
command -v g++ >/dev/null || need+=(g++)
[ -f /usr/include/nlohmann/json.hpp ] || need+=(nlohmann-json3-dev)
command -v make >/dev/null || need+=(make)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
echo "deps: python3 $(python3 --version 2>&1 | cut -d' ' -f2), $(Rscript --version 2>&1 | head -1), $(g++ --version | head -1)"
