// common/http_url.h: the one reader of an operator's http(s) URL (meshctl's
// --api, the panel's and the alerts' URLs in the config).
#include "common/http_url.h"

#include <doctest/doctest.h>

namespace mesh {
namespace {

TEST_CASE("parse_http_url: http(s)://host[:port][/path], ports spelled out or defaulted") {
  CHECK(*parse_http_url("https://panel.example.net") == HttpUrl{true, "panel.example.net", 443, ""});
  CHECK(*parse_http_url("http://panel.example.net") == HttpUrl{false, "panel.example.net", 80, ""});
  CHECK(*parse_http_url("http://127.0.0.1:3000/base/") == HttpUrl{false, "127.0.0.1", 3000, "/base"});
  CHECK(*parse_http_url("https://[2001:db8::1]:8443") == HttpUrl{true, "2001:db8::1", 8443, ""});
  CHECK(*parse_http_url("https://[fe80::1%eth0]/") == HttpUrl{true, "fe80::1%eth0", 443, ""});
  CHECK(*parse_http_url("http://my_host-1.example:65535//") == HttpUrl{false, "my_host-1.example", 65535, ""});
}

TEST_CASE("parse_http_url refuses anything else, saying what is wrong") {
  struct Case {
    const char* text;
    HttpUrlError code;
    const char* message;
  };
  for (const Case& c : std::initializer_list<Case>{
           {"ftp://x", HttpUrlError::scheme, "give http://host:port or https://host:port"},
           {"panel.example.net", HttpUrlError::scheme, "give http://"},
           {"https://", HttpUrlError::host, "no valid host"},
           {"https://user:pw@host", HttpUrlError::form, "no user name"},
           {"https://host/a?b", HttpUrlError::form, "no query"},
           {"https://host/#f", HttpUrlError::form, "fragment"},
           {"https://ho st", HttpUrlError::form, "space"},
           {"https://host:0", HttpUrlError::port, "1..65535"},
           {"https://host:70000", HttpUrlError::port, "1..65535"},
           {"https://host:", HttpUrlError::port, "1..65535"},
           {"https://host:8x", HttpUrlError::port, "1..65535"},
           {"https://[::1", HttpUrlError::host, "in brackets"},
           {"https://[::1]x", HttpUrlError::host, "in brackets"},
           {"http://::1:4717", HttpUrlError::host, "in brackets"},
           {"http://ho%st", HttpUrlError::host, "no valid host"},
           {"http://hö", HttpUrlError::host, "no valid host"},
       }) {
    CAPTURE(c.text);
    auto parsed = parse_http_url(c.text);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.code() == c.code);
    CHECK(parsed.message().find(c.message) != std::string::npos);
  }
  CHECK(parse_http_url("http://h/" + std::string(kUrlBytesMax, 'a')).code() == HttpUrlError::form);
}

TEST_CASE("format_http_url spells the port out and brackets IPv6") {
  CHECK(format_http_url(*parse_http_url("https://[::1]/x")) == "https://[::1]:443/x");
  CHECK(format_http_url(*parse_http_url("http://a.example")) == "http://a.example:80");
  const HttpUrl url = *parse_http_url("https://[2001:db8::1]:8443/p/q");
  CHECK(*parse_http_url(format_http_url(url)) == url);
}

}  // namespace
}  // namespace mesh
