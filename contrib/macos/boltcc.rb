# Homebrew formula for boltcc (client, boltccd daemon, boltcc-ssh helper).
# Homebrew installs formulae only from a tap, so from this file:
#
#   brew tap-new boltcc/local
#   cp contrib/macos/boltcc.rb "$(brew --repository boltcc/local)/Formula/"
#   brew install boltcc/local/boltcc
#
# The url and sha256 are written by
# `contrib/macos/formula.sh -w [-u URL] boltcc-VERSION.tar.gz`: the tarball
# of `make dist` (it has configure; GitHub's "Source code" archives do not),
# the same file that is uploaded to the release.  Not yet run on a Mac:
# see contrib/xcode/README.md.
#
# No `license`: the repository has no licence file yet (homebrew/core
# would require one; a private tap does not).
class Boltcc < Formula
  desc "Distcc-compatible compile farm for Xcode and make (client and daemon)"
  homepage "https://github.com/boltcc/boltcc"
  url "https://github.com/boltcc/boltcc/releases/download/v0.1.0/boltcc-0.1.0.tar.gz"
  # placeholder: no release yet; formula.sh writes the real sha256 (until then: --HEAD, or formula.sh -u file://...)
  sha256 "0000000000000000000000000000000000000000000000000000000000000000"

  head do
    url "https://github.com/boltcc/boltcc.git", branch: "main"

    depends_on "autoconf" => :build
    depends_on "automake" => :build
  end

  # configure finds every library with pkg-config (PKG_CHECK_MODULES).
  depends_on "pkgconf" => :build
  depends_on "libssh2"
  depends_on "lzo"
  depends_on "sqlite"
  depends_on "zstd"
  # No openssl: on macOS boltcc and boltccd take SHA-256 from CommonCrypto
  # (libSystem); only boltcc-ssh needs OpenSSL, through libssh2.

  # The test starts a boltccd on loopback ports.  Older brew versions
  # neither sandbox the test's network nor know this method.
  allow_network_access! :test if respond_to?(:allow_network_access!)

  def install
    system "autoreconf", "--force", "--install", "--verbose" if build.head?
    system "./configure", *std_configure_args, "--disable-silent-rules"
    system "make", "install"

    # `make install` writes the keg's versioned prefix into the Xcode
    # settings and the LaunchDaemon plist; the opt prefix survives
    # `brew upgrade`.
    inreplace [pkgshare/"boltcc.xcconfig", pkgshare/"launchd/org.boltcc.boltccd.plist"],
              prefix, opt_prefix
    others = [pkgshare/"launchd/install-launchd.sh", *(pkgshare/"systemd").glob("*")]
    others.select!(&:file?)
    inreplace others, prefix, opt_prefix, false unless others.empty?
  end

  def post_install
    (var/"boltccd/cache").mkpath
    (var/"log").mkpath
  end

  def caveats
    <<~EOS
      `brew services start boltcc` runs boltccd for this Mac only (loopback).
      A worker that serves other Macs runs as a system LaunchDaemon instead:
        sudo #{opt_pkgshare}/launchd/install-launchd.sh
      (edit --allow in a copy of its plist first). Xcode settings:
        #{opt_pkgshare}/boltcc.xcconfig
      First check the install with: boltccd --self-test
    EOS
  end

  service do
    run [opt_bin/"boltccd", "--no-detach", "--log-stderr",
         "--listen", "127.0.0.1", "--allow", "127.0.0.1/32",
         "--cache-dir", var/"boltccd/cache"]
    keep_alive true
    working_dir var/"boltccd"
    log_path var/"log/boltccd.log"
    error_log_path var/"log/boltccd.log"
  end

  test do
    require "socket"

    # SHA-256, the compiler, the cache and a loopback compile, as shipped
    system bin/"boltccd", "--self-test"

    # Two free loopback ports, held together so that they differ.
    servers = Array.new(2) { TCPServer.new("127.0.0.1", 0) }
    port, stats_port = servers.map { |s| s.addr[1] }
    servers.each(&:close)
    stats_url = "http://127.0.0.1:#{stats_port}/stats.json"

    (testpath/"answer.h").write "#define ANSWER 42\n"
    (testpath/"hello.c").write <<~C
      #include "answer.h"
      int answer(void) { return ANSWER; }
    C

    pid = spawn bin/"boltccd", "--no-detach", "--listen", "127.0.0.1",
                "--port", port.to_s, "--stats-port", stats_port.to_s,
                "--allow", "127.0.0.1/32", "--jobs", "2",
                "--cache-dir", testpath/"cache", "--pid-file", testpath/"boltccd.pid",
                "--log-file", testpath/"boltccd.log"
    begin
      50.times do
        break if quiet_system "curl", "-sf", "-o", File::NULL, stats_url

        sleep 0.2
      end
      assert_path_exists testpath/"boltccd.pid"

      # ",bolt": the host is a boltccd (BOLTCC_HOSTS only; DISTCC_HOSTS keeps
      # distcc's grammar and is read only without BOLTCC_HOSTS).
      ENV["BOLTCC_HOSTS"] = "127.0.0.1:#{port},bolt"
      ENV["DISTCC_HOSTS"] = "127.0.0.1:#{port}"
      ENV["DISTCC_FALLBACK"] = "0" # fail instead of compiling locally
      system bin/"boltcc", ENV.cc, "-c", "hello.c", "-o", "hello.o"
      assert_path_exists testpath/"hello.o"

      # The daemon counts a job just after replying.
      compiled = 0
      25.times do
        compiled = JSON.parse(shell_output("curl -s #{stats_url}"))["dcc_compile_ok"]
        break if compiled.positive?

        sleep 0.2
      end
      assert_operator compiled, :>=, 1
    ensure
      Process.kill("TERM", pid)
      Process.wait(pid)
    end
  end
end
