// Catch2 v2 (Debian 12's) or v3 (the wrap), behind one include.
#pragma once
#if __has_include(<catch2/catch_all.hpp>)
#include <catch2/catch_all.hpp>
#define APAIRS_CATCH3 1
#else
#include <catch2/catch.hpp>
#endif
