"""Scrapy's side of scripts/bench-crawl: the crawl of `luacrawl crawl -c 64 --per-host 64`
written as a Scrapy CrawlSpider, to compare the two on the same site.

    python3 -m scrapy runspider scripts/bench_scrapy_spider.py \
        -a start_url=http://127.0.0.1:PORT/index.html [-a stats_file=FILE] \
        -O pages.jsonl [-s CLOSESPIDER_PAGECOUNT=N]

One rule follows every link of the start URL's host and port (LinkExtractor with
allow_domains; the offsite middleware agrees), and its callback yields the fields
of luacrawl crawl's record: url, status, depth, content_type, length, title. The
limits are luacrawl's: 64 requests in flight in all and per host, robots.txt obeyed,
no delay, no AutoThrottle, no HTTP cache, no telnet console; scheduler and depth
priority stay Scrapy's defaults.

stats_file gets, when the spider closes, a JSON object: pages (responses that
reached the callback), first and last (seconds since the epoch of the first request
and of the last response: the crawl itself, without Scrapy's start-up and shut-down),
reason (why the spider closed) and a few of Scrapy's own stats.
"""
import json
import time
from urllib.parse import urlparse

from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import CrawlSpider, Rule


class BenchSpider(CrawlSpider):
    name = "luacrawl-bench"
    custom_settings = {
        "CONCURRENT_REQUESTS": 64,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 64,
        "CONCURRENT_REQUESTS_PER_IP": 0,
        "ROBOTSTXT_OBEY": True,
        "DOWNLOAD_DELAY": 0,
        "RANDOMIZE_DOWNLOAD_DELAY": False,
        "AUTOTHROTTLE_ENABLED": False,
        "HTTPCACHE_ENABLED": False,
        "TELNETCONSOLE_ENABLED": False,
        "LOG_LEVEL": "INFO",
        # The fingerprinter of Scrapy >= 2.7 (the default one only warns that it is old).
        "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7",
    }

    def __init__(self, start_url=None, stats_file=None, *args, **kwargs):
        if not start_url:
            raise ValueError("give the start URL: -a start_url=http://HOST:PORT/...")
        parts = urlparse(start_url)
        self.start_urls = [start_url]
        # The offsite middleware compares host names; LinkExtractor's allow_domains
        # compares the network location, port included.
        self.allowed_domains = [parts.hostname]
        self.rules = (
            Rule(LinkExtractor(allow_domains=[parts.netloc]), callback="parse_page", follow=True),
        )
        self.stats_file = stats_file
        self.pages = 0
        self.first = None
        self.last = None
        super().__init__(*args, **kwargs)

    def start_requests(self):
        self.first = time.time()
        return super().start_requests()

    # The start URL's response goes to parse_start_url: a page like the others.
    def parse_start_url(self, response):
        return self.parse_page(response)

    def parse_page(self, response):
        self.pages += 1
        self.last = time.time()
        ctype = response.headers.get("Content-Type")
        title = response.css("title::text").get()
        if title is not None:
            title = " ".join(title.split())
        yield {
            "url": response.request.url,
            "status": response.status,
            "depth": response.meta.get("depth", 0),
            "content_type": ctype.decode("latin-1") if ctype is not None else None,
            "length": len(response.body),
            "title": title,
        }

    def closed(self, reason):
        if not self.stats_file:
            return
        stats = self.crawler.stats.get_stats()
        keep = ("downloader/request_count", "downloader/response_count",
                "response_received_count", "item_scraped_count", "dupefilter/filtered",
                "offsite/filtered", "robotstxt/request_count", "log_count/ERROR")
        out = {
            "pages": self.pages,
            "first": self.first,
            "last": self.last,
            "reason": reason,
            "stats": {k: stats[k] for k in keep if k in stats},
        }
        with open(self.stats_file, "w") as f:
            json.dump(out, f)
            f.write("\n")
